package io.asyncjobs.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Takes a test class or method out of the contract check ({@link ContractGuard}): its RestAssured
 * exchanges are not held against the served OpenAPI document. For tests that deliberately step
 * outside the contract (for example one that installs a filter of its own against an altered
 * document); say why in {@link #value()}. Use sparingly: every exempt test is a route the build no
 * longer keeps true to the document.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
public @interface ContractExempt {

  /** Why this test may depart from the document. */
  String value();
}
