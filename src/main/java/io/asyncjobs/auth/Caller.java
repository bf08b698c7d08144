package io.asyncjobs.auth;

import io.asyncjobs.config.JobsConfig;
import io.asyncjobs.problem.ProblemException;
import io.asyncjobs.queue.Job;
import io.asyncjobs.queue.Owner;
import io.quarkus.security.identity.SecurityIdentity;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Singleton;
import jakarta.json.JsonString;
import java.util.Objects;
import java.util.Set;
import org.eclipse.microprofile.jwt.JsonWebToken;

/**
 * Who is calling, as the bearer token says: the job owner its requests act for, and whether it
 * holds the {@code admin} role. A caller sees only its own jobs; an admin sees all of them.
 */
@RequestScoped
public class Caller {

  /** The role that sees and manages every job and the service settings. */
  public static final String ADMIN = "admin";

  /** Longest owner id or kind a token may carry (the jobs table's limit). */
  private static final int MAX_OWNER_PART = 200;

  private final SecurityIdentity identity;
  private final String ownerKindClaim;
  private final String defaultOwnerKind;

  /** The owner read from the token, or the problem that says why there is none; null until read. */
  private Owner owner;

  private ProblemException noOwner;

  Caller(SecurityIdentity identity, OwnerClaims claims) {
    this.identity = identity;
    this.ownerKindClaim = claims.ownerKindClaim;
    this.defaultOwnerKind = claims.defaultOwnerKind;
  }

  /**
   * The two claim settings, read once: a config mapping injected straight into this request-scoped
   * bean would be built again for every request. A singleton, so its fields are read directly
   * rather than through a client proxy.
   */
  @Singleton
  static class OwnerClaims {
    final String ownerKindClaim;
    final String defaultOwnerKind;

    OwnerClaims(JobsConfig config) {
      this.ownerKindClaim = config.auth().ownerKindClaim();
      this.defaultOwnerKind = config.auth().defaultOwnerKind();
    }
  }

  /** Whether the request carried a valid token. */
  public boolean authenticated() {
    return !identity.isAnonymous();
  }

  /** Whether the token grants the {@code admin} role. */
  public boolean isAdmin() {
    return authenticated() && identity.hasRole(ADMIN);
  }

  /**
   * The owner the caller's jobs are filed under: the principal kind from the configured claim
   * (default {@code user}) and the token's subject.
   *
   * @throws ProblemException 401 when there is no token, 403 when it names no usable subject
   */
  public Owner owner() {
    // Read once per request: a route asks several times (scope, priority, the job's owner), and
    // each read costs a claim lookup (see readOwner).
    if (owner == null) {
      try {
        owner = readOwner();
      } catch (ProblemException e) {
        noOwner = e;
      }
    }
    if (noOwner != null) {
      throw noOwner;
    }
    return owner;
  }

  /**
   * The owner the token names, or null when it names none: for checks that answer before the
   * 401/403 {@link #owner()} then gives.
   */
  public Owner ownerIfNamed() {
    try {
      return owner();
    } catch (ProblemException e) {
      return null;
    }
  }

  private Owner readOwner() {
    if (!(identity.getPrincipal() instanceof JsonWebToken token) || identity.isAnonymous()) {
      throw ProblemException.unauthenticated("this route needs a bearer token");
    }
    // Only the subject identifies a principal for good; names like preferred_username can be
    // chosen or changed by their holder, so a token without one owns nothing here.
    String id = token.getSubject();
    // Asked only when present: smallrye-jwt looks a claim name up among the standard ones first,
    // and one that is not among them throws and catches an exception on every call (a stack trace
    // per request, about 3% of an enqueue's CPU in the app, 2026-12-07). A token that lists no
    // names is asked directly.
    Set<String> names = token.getClaimNames();
    Object kindClaim =
        names == null || names.contains(ownerKindClaim) ? token.getClaim(ownerKindClaim) : null;
    String kind =
        kindClaim == null
            ? defaultOwnerKind
            : kindClaim instanceof JsonString text ? text.getString() : kindClaim.toString();
    if (id == null || id.isBlank() || id.length() > MAX_OWNER_PART) {
      throw ProblemException.forbidden("the token needs a subject (sub) of 1 to 200 characters");
    }
    if (kind.isBlank() || kind.length() > MAX_OWNER_PART) {
      throw ProblemException.forbidden("the token's owner kind must be 1 to 200 characters");
    }
    return new Owner(kind, id);
  }

  /**
   * For enqueue endpoints whose kind is restricted: a 403 problem unless the token grants {@code
   * role} (an admin passes every such check).
   */
  public void requireRole(String role) {
    owner();
    if (!identity.hasRole(role) && !isAdmin()) {
      throw ProblemException.forbidden("this kind needs the role " + role);
    }
  }

  /** Whether the caller may see this job: its own, or any when admin. */
  public boolean maySee(Job job) {
    if (isAdmin()) {
      return true;
    }
    Owner owner = owner();
    return Objects.equals(owner.kind(), job.ownerKind) && Objects.equals(owner.id(), job.ownerId);
  }
}
