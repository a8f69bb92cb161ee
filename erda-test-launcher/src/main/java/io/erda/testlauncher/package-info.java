/**
 * Runs JUnit Platform tests without Maven (scripts/test-softroce, inside a VM) and prints the results as Maven Surefire
 * does: {@link SurefireStyleLauncher} (the command line: classes, methods, packages, tags, and {@code --aggregate}),
 * {@code SurefireReporter} (counts per top-level class, output redirection), {@code SurefireFormat} (Surefire's lines),
 * {@code StateFile} (a run's progress, written as it happens so the class a dead JVM was running is known) and
 * {@code Aggregate} (the Results section of several runs from their state files).
 *
 * <p>Rules: the launcher jar goes on the class path of the module under test, whose test class path supplies the JUnit
 * Platform at run time; so it depends on junit-platform-launcher and the JDK only, never on a project module. Its
 * output follows Surefire's format so that a run reads like {@code ./mvnw verify}.
 */
package io.erda.testlauncher;
