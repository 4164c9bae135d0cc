// Types of sealbox's Node.js client library (lib/, plain JavaScript). The page:
// docs/clients/NODE.md; the contract: docs/CLIENTS.md.
/// <reference types="node" />

/** Bytes, or a string taken as UTF-8. */
export type Bytes = Uint8Array | string;

/** The input of sealStream/openStream. Bytes, or a function giving a fresh iterable,
 * can be read again, so the call may be retried before its first answer; a one-shot
 * iterable (a Node.js Readable, a generator) is never retried. */
export type StreamInput =
  | Bytes
  | AsyncIterable<Bytes>
  | Iterable<Bytes>
  | NodeJS.ReadableStream
  | (() => AsyncIterable<Bytes> | Iterable<Bytes> | NodeJS.ReadableStream);

/** TLS settings: a CA (else the system roots), a client certificate and key for
 * mTLS, a server name to verify instead of the address's host. PEM inline or in files. */
export interface TlsOptions {
  ca?: string | Buffer;
  caFile?: string;
  cert?: string | Buffer;
  certFile?: string;
  key?: string | Buffer;
  keyFile?: string;
  serverName?: string;
}

/** What onRetry is told before each wait. */
export interface RetryInfo {
  /** The attempt that failed (1 for the first). */
  attempt: number;
  delayMs: number;
  error: SealboxError;
}

/** Retries on UNAVAILABLE: exponential backoff with full jitter, all attempts
 * within the call's deadline. */
export interface RetryOptions {
  /** Attempts in all, at least 1 (default 8). */
  maxAttempts?: number;
  /** The first wait's ceiling (default 100 ms), doubling each retry... */
  initialBackoffMs?: number;
  /** ...up to this (default 2000 ms). */
  maxBackoffMs?: number;
  onRetry?: (info: RetryInfo) => void;
}

/** Automatic token renewal: RenewToken once less than a third of the token's life is
 * left, or at the first call when its expiry is not given. */
export interface TokenRenewalOptions {
  /** When the token given expires, if known. */
  expiresAt?: Date | number;
  /** Gets each successor (store it: the client already uses it). */
  onRenewed?: (token: string, expiresAt: Date) => void;
  /** Gets a failed renewal (the old token stays in use; tried again at the next
   * call, except after FailedPreconditionError: a token that cannot renew). */
  onError?: (error: SealboxError) => void;
}

export interface ClientOptions {
  /** A tenant token, sent as `authorization: Bearer <token>`. */
  token?: string;
  /** TLS settings; any of them means TLS, even to loopback. */
  tls?: TlsOptions;
  /** Plaintext to a host that is not loopback (plaintext is the default only there). */
  insecure?: boolean;
  /** Deadline of each unary and batch call, across its retries (default 30000). */
  timeoutMs?: number;
  retry?: RetryOptions;
  tokenRenewal?: boolean | TokenRenewalOptions;
  /** Extra grpc-js channel options. */
  channelOptions?: Record<string, string | number>;
}

export interface CallOptions {
  /** This call's deadline in ms, across its retries. */
  timeoutMs?: number;
}

export interface DataOptions extends CallOptions {
  /** Authenticated, not encrypted; opening needs the same bytes. */
  associatedData?: Bytes;
}

export interface StreamOptions extends DataOptions {
  /** SealStream's plaintext bytes per segment: a power of two, 4 KiB to 4 MiB
   * (default 64 KiB). */
  segmentSize?: number;
}

export interface FileOptions extends StreamOptions {
  /** Called as input is sent: bytes of `inPath` so far, and its size. */
  onProgress?: (done: number, total: number) => void;
}

export interface EnvelopeOptions extends DataOptions {
  /** Called after each segment: bytes of `inPath` so far, and its size. */
  onProgress?: (done: number, total: number) => void;
}

export interface Sealed { ciphertext: Buffer; keyVersion: number; }
export interface Opened { plaintext: Buffer; keyVersion: number; }
export interface Rewrapped { ciphertext: Buffer; keyVersion: number; previousKeyVersion: number; }
export interface DataKey { plaintext: Buffer | null; ciphertext: Buffer; keyVersion: number; }
export interface RenewedToken { token: string; tokenId: string; expiresAt: Date; }
export interface FileResult { keyVersion: number; bytesRead: number; bytesWritten: number; }

/** One batch item's outcome. */
export type BatchResult<T> = { ok: true; result: T } | { ok: false; error: SealboxError };

export interface SealItem { key: string; plaintext: Bytes; associatedData?: Bytes; }
export interface OpenItem { key: string; ciphertext: Uint8Array; associatedData?: Bytes; }

export class Client {
  /** @param address HOST:PORT, [IPV6]:PORT or unix:PATH */
  constructor(address: string, options?: ClientOptions);
  /** The token calls are made with now (a successor once one was issued). */
  readonly token: string | undefined;
  close(): void;
  seal(key: string, plaintext: Bytes, options?: DataOptions): Promise<Sealed>;
  open(key: string, ciphertext: Uint8Array, options?: DataOptions): Promise<Opened>;
  rewrap(key: string, ciphertext: Uint8Array, options?: DataOptions): Promise<Rewrapped>;
  sealBatch(items: SealItem[], options?: CallOptions): Promise<Array<BatchResult<Sealed>>>;
  openBatch(items: OpenItem[], options?: CallOptions): Promise<Array<BatchResult<Opened>>>;
  rewrapBatch(items: OpenItem[], options?: CallOptions): Promise<Array<BatchResult<Rewrapped>>>;
  generateDataKey(key: string, options?: DataOptions & { bytes?: 16 | 32; includePlaintext?: boolean }):
    Promise<DataKey>;
  renewToken(options?: CallOptions & { ttlSeconds?: number }): Promise<RenewedToken>;
  sealStream(key: string, input: StreamInput, options?: StreamOptions): AsyncGenerator<Buffer, void, undefined>;
  openStream(key: string, input: StreamInput, options?: StreamOptions): AsyncGenerator<Buffer, void, undefined>;
  sealFile(key: string, inPath: string, outPath: string, options?: FileOptions): Promise<FileResult>;
  openFile(key: string, inPath: string, outPath: string, options?: FileOptions): Promise<FileResult>;
  sealEnvelopeFile(key: string, inPath: string, outPath: string, options?: EnvelopeOptions): Promise<FileResult>;
  openEnvelopeFile(key: string, inPath: string, outPath: string, options?: EnvelopeOptions): Promise<FileResult>;
}

/** The CRC32C (Castagnoli) of `bytes`, unsigned. */
export function crc32c(bytes: Uint8Array): number;

/** Every error the library throws for a call: the gRPC code and the server's message. */
export class SealboxError extends Error {
  constructor(code: number, message: string, options?: { requestId?: string; cause?: unknown });
  readonly code: number;
  /** The code's name: "INVALID_ARGUMENT", ... */
  readonly codeName: string;
  readonly requestId: string | undefined;
}
export class DecryptionFailedError extends SealboxError {}
export class ChecksumError extends SealboxError {
  constructor(message: string, code?: number);
}
export class UnauthenticatedError extends SealboxError {}
export class PermissionDeniedError extends SealboxError {}
export class NotFoundError extends SealboxError {}
export class InvalidArgumentError extends SealboxError {}
export class FailedPreconditionError extends SealboxError {}
export class ResourceExhaustedError extends SealboxError {}
export class UnavailableError extends SealboxError {}
export class DeadlineExceededError extends SealboxError {}
export class EnvelopeFormatError extends SealboxError {
  constructor(message: string);
}
