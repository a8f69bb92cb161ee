package io.erda.fabric;

/** Thrown by the synchronous layer when a work request completes with an error status. */
public class CompletionException extends FabricException {
    private final transient Completion completion;

    public CompletionException(Completion completion) {
        super(completion.opcode() + " wr " + completion.wrId() + " failed: " + completion.status()
                + (completion.detail() == null ? "" : " (" + completion.detail() + ")"));
        this.completion = completion;
    }

    public Completion completion() {
        return completion;
    }

    public Status status() {
        return completion.status();
    }
}
