package io.erda.fabric.shm;

import io.erda.fabric.Status;

/** How a work request ended, before it becomes a completion. */
record Outcome(Status status, String detail) {
    static final Outcome SUCCESS = new Outcome(Status.SUCCESS, null);

    boolean ok() {
        return status == Status.SUCCESS;
    }
}
