package io.asyncjobs.api;

import io.asyncjobs.testing.PackagedAppResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusIntegrationTest;

/** {@link OpenApiTest} against the packaged application, or the native executable. */
@QuarkusIntegrationTest
@WithTestResource(PackagedAppResource.class)
class OpenApiIT extends OpenApiTest {}
