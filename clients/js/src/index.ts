// @holdfast/client: the Holdfast lock service from Node.js and browsers.
export { createClient } from "./client.js";
export type { AssignOptions, ClientOptions, HoldfastClient, LockedAsOptions, Locks } from "./client.js";
export type { MethodLock } from "./method_lock.js";
export type { Pem, TlsOptions } from "./tls.js";
export type { LockContext, LockGroupContext, WithLockOptions, WithLocksOptions } from "./with_lock.js";
export type {
  AcquireAllOptions,
  AcquireOptions,
  Assignment,
  FreeStatus,
  HandleRef,
  HeldStatus,
  HolderInfo,
  HoldRef,
  KeyRequest,
  ListOptions,
  LockGroup,
  LockHandle,
  LockInfo,
  LockMode,
  LockPage,
  LockStatus,
  ModeOptions,
  Principal,
  ReleaseResult,
  RenewOptions,
  RenewResult,
  TransferResult,
  TryAcquireAllOptions,
  TryAcquireOptions,
} from "./types.js";
export {
  ConnectionError,
  ForbiddenError,
  HoldfastError,
  InternalError,
  InvalidArgumentError,
  LeaseLostError,
  LockAccessDeniedError,
  LockHeldError,
  LockTimeoutError,
  MethodNotAllowedError,
  NotFoundError,
  NotHolderError,
  PassThroughError,
  ProtocolError,
  RateLimitedError,
  RulesetConflictError,
  StoreUnavailableError,
  UnauthenticatedError,
  UnavailableError,
  errorFromWire,
} from "./errors.js";
export type { ErrorDetails } from "./errors.js";
