package io.erda.testsupport;

/** The child of {@link ChildProcessTest}: {@code ready URI} prints a ready line and sleeps; {@code exit N} exits. */
public final class Child {
    private Child() {
    }

    public static void main(String[] args) throws InterruptedException {
        System.out.println("starting " + String.join(" ", args));
        switch (args[0]) {
            case "ready" -> {
                System.out.println("child listening on " + args[1]);
                Thread.sleep(120_000);
            }
            case "exit" -> {
                System.err.println("told to fail");
                System.exit(Integer.parseInt(args[1]));
            }
            case "silent" -> Thread.sleep(120_000);
            default -> throw new IllegalArgumentException(args[0]);
        }
    }
}
