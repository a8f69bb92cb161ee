/**
 * Test support that other modules' tests reuse through the test-jar: {@link io.erda.fabric.testing.Fuzzing} (the
 * rejection property and seed corpus check of the Jazzer fuzz targets, docs/ARCHITECTURE.md, Testing).
 */
package io.erda.fabric.testing;
