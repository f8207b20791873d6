// Errors: one class per server error code, all extending HoldfastError, so callers can branch
// with `instanceof` or on `code` (the wire code, e.g. "LOCK_TIMEOUT"). Both transports build
// them through errorFromWire(), so a refusal looks the same over HTTP and RESP.

/** Details the server attached to an error (`key`, `timeoutMs`, `retryAfterMs`, `field`, ...). */
export type ErrorDetails = Record<string, string | number | boolean | null>;

/** Every error this package throws on purpose. `code` is the server's wire code, or one of
 * the client-side codes `CONNECTION`, `PROTOCOL`, `LEASE_LOST`, `PASS_THROUGH`. */
export class HoldfastError extends Error {
  readonly code: string;
  readonly details: ErrorDetails;

  constructor(code: string, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  override get name(): string {
    return this.constructor.name;
  }
}

/** A blocking acquire (or a timed `acquireLock`) was not granted within `timeoutMs`. */
export class LockTimeoutError extends HoldfastError {
  /** The contended key. */
  readonly key: string;
  /** The acquire timeout that elapsed, in milliseconds. */
  readonly timeoutMs: number;

  constructor(key: string, timeoutMs: number, details: ErrorDetails = {}) {
    super("LOCK_TIMEOUT", `Could not acquire lock: ${key} (not granted within ${timeoutMs} ms)`, {
      ...details,
      key,
      timeoutMs,
    });
    this.key = key;
    this.timeoutMs = timeoutMs;
  }
}

/** A rule of the server's lock rule set refused the operation (HTTP 403). */
export class LockAccessDeniedError extends HoldfastError {}
/** An admin-only operation (listing every hold) by a member (HTTP 403). */
export class ForbiddenError extends HoldfastError {}
/** Over the per-user acquire cap; `retryAfterMs` says when a slot frees (HTTP 429). */
export class RateLimitedError extends HoldfastError {
  get retryAfterMs(): number | undefined {
    const v = this.details.retryAfterMs;
    return typeof v === "number" ? v : undefined;
  }
}
/** Missing or unknown credentials (HTTP 401; RESP also answers NOAUTH / WRONGPASS). */
export class UnauthenticatedError extends HoldfastError {}
/** A bad key, TTL, timeout, owner or argument; `details.field` names it when known (HTTP 400). */
export class InvalidArgumentError extends HoldfastError {}
/** The key is held by someone else (an assignment that did not wait). */
export class LockHeldError extends HoldfastError {}
/** The caller is not the current holder: a transfer or unassign from someone who does not
 * hold the key, or a `lockedAs` method called out of turn ("Not your turn"). */
export class NotHolderError extends HoldfastError {}
/** A second lock rule set under another name. */
export class RulesetConflictError extends HoldfastError {}
/** The server is shutting down or its store cannot be reached (HTTP 503). */
export class UnavailableError extends HoldfastError {}
/** The server's log cannot be written; state-changing calls are refused until it recovers. */
export class StoreUnavailableError extends HoldfastError {}
/** No such route or rule set. */
export class NotFoundError extends HoldfastError {}
/** The HTTP method is not allowed on the path. */
export class MethodNotAllowedError extends HoldfastError {}
/** The server failed in a way it did not expect. */
export class InternalError extends HoldfastError {}

/** The server could not be reached, or the connection broke while a call waited for its
 * answer (the call may or may not have taken effect). */
export class ConnectionError extends HoldfastError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("CONNECTION", message, {}, options);
  }
}

/** The peer answered something that is not Holdfast's protocol. */
export class ProtocolError extends HoldfastError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("PROTOCOL", message, {}, options);
  }
}

/** The reason `withLock` aborts its signal with: the lease ended while `fn` ran (a renewal
 * answered `lease_lost`, or the lease ran out without a successful renewal). */
export class LeaseLostError extends HoldfastError {
  readonly key: string;
  constructor(key: string, why: string) {
    super("LEASE_LOST", `lost the lease on ${key}: ${why}`, { key });
    this.key = key;
  }
}

/** A call that needs a server, made on a client created with `passThrough: true`. */
export class PassThroughError extends HoldfastError {
  constructor(call: string) {
    super("PASS_THROUGH", `${call} needs a server; this client was created in pass-through mode`);
  }
}

type ErrorClass = new (code: string, message: string, details: ErrorDetails) => HoldfastError;

const byCode: Record<string, ErrorClass> = {
  LOCK_ACCESS_DENIED: LockAccessDeniedError,
  FORBIDDEN: ForbiddenError,
  RATE_LIMITED: RateLimitedError,
  UNAUTHENTICATED: UnauthenticatedError,
  NOAUTH: UnauthenticatedError,
  WRONGPASS: UnauthenticatedError,
  INVALID_ARGUMENT: InvalidArgumentError,
  LOCK_HELD: LockHeldError,
  LOCK_NOT_HOLDER: NotHolderError,
  RULESET_CONFLICT: RulesetConflictError,
  UNAVAILABLE: UnavailableError,
  STORE_UNAVAILABLE: StoreUnavailableError,
  NOT_FOUND: NotFoundError,
  METHOD_NOT_ALLOWED: MethodNotAllowedError,
  INTERNAL: InternalError,
};

/**
 * The error for a refusal the server answered. `key` and `timeoutMs` of a LOCK_TIMEOUT are
 * taken from the details, falling back to what the call asked for (`context`).
 */
export function errorFromWire(
  code: string,
  message: string,
  details: ErrorDetails,
  context: { key?: string; timeoutMs?: number } = {},
): HoldfastError {
  if (code === "LOCK_TIMEOUT") {
    const key = context.key ?? String(details.key ?? "");
    const timeoutMs = typeof details.timeoutMs === "number" ? details.timeoutMs : (context.timeoutMs ?? 0);
    return new LockTimeoutError(key, timeoutMs, details);
  }
  const Class = byCode[code] ?? HoldfastError;
  return new Class(code, message, details);
}

/** A client-side refusal of an argument, shaped like the server's (`details.field`). */
export function invalidArgument(field: string, message: string): InvalidArgumentError {
  return new InvalidArgumentError("INVALID_ARGUMENT", message, { field });
}
