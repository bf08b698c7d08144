package io.asyncjobs;

import io.asyncjobs.testing.PackagedAppResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** {@link HealthTest} against the packaged application, or the native executable. */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class HealthIT extends HealthTest {}
