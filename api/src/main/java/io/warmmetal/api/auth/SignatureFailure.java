package io.warmmetal.api.auth;

/**
 * Why a signed request is refused, in EC2's words, with the HTTP status EC2 gives it. The message
 * says what is wrong and never echoes a secret or the signature.
 */
public final class SignatureFailure extends RuntimeException {
  /** EC2's error codes for authentication, each with its status. */
  enum Code {
    /** No signature at all: neither an Authorization header nor a pre-signed query. */
    MissingAuthenticationToken(401),
    /** A signature whose parts are missing or malformed. */
    IncompleteSignature(400),
    /** An access key that is unknown, revoked, or not one that may sign. */
    AuthFailure(401),
    /** A well-formed signature that is wrong for this request, or scoped to another service. */
    SignatureDoesNotMatch(403),
    /** Signed too far from now, or a pre-signed URL past its expiry. */
    RequestExpired(400),
    InvalidParameterValue(400);

    private final int status;

    Code(int status) {
      this.status = status;
    }
  }

  private final Code code;

  SignatureFailure(Code code, String message) {
    super(message, null, false, false); // a refusal, not a fault: no stack trace
    this.code = code;
  }

  /** One of EC2's codes: {@code MissingAuthenticationToken}, {@code AuthFailure}, … */
  public String code() {
    return code.name();
  }

  public int status() {
    return code.status;
  }
}
