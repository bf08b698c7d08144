package io.asyncjobs.auth;

import static io.restassured.RestAssured.given;
import static org.assertj.core.api.Assertions.assertThat;

import io.asyncjobs.testing.TestClock;
import io.asyncjobs.testing.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

@QuarkusTest
class CachingJwtParserTest {

  @Inject CachingJwtParser parser;
  @Inject TestClock clock;

  @AfterEach
  void resetClock() {
    clock.reset();
  }

  @Test
  void shouldVerifyARepeatedTokenOnceUntilItsTimeIsUp() {
    String token = Tokens.user("carol");
    long before = parser.hits();

    given().auth().oauth2(token).get("/api/jobs").then().statusCode(200);
    given().auth().oauth2(token).get("/api/jobs").then().statusCode(200);
    given().auth().oauth2(token).get("/api/jobs").then().statusCode(200);
    assertThat(parser.hits() - before).isEqualTo(2);

    // Past the cache's time limit the token is checked again (and, still valid, accepted).
    clock.set(Instant.now().plus(Duration.ofMinutes(6)));
    long afterTtl = parser.hits();
    given().auth().oauth2(token).get("/api/jobs").then().statusCode(200);
    assertThat(parser.hits()).isEqualTo(afterTtl);
  }

  @Test
  void shouldNeverRememberATokenThatFailed() {
    String bad = Tokens.signedByStranger("mallory");
    long before = parser.hits();
    for (int i = 0; i < 3; i++) {
      given().auth().oauth2(bad).get("/api/jobs").then().statusCode(401);
    }
    assertThat(parser.hits()).isEqualTo(before);
  }
}
