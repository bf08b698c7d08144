package io.asyncjobs.api;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a route's body parameter the caller may leave out: an empty body without {@code
 * Content-Type} reaches the route as null instead of being refused with a 415 ({@link
 * UntypedBodies}). A body with content still needs its type.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
public @interface OptionalBody {}
