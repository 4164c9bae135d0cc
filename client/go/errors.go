package sealbox

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// SealboxError is the base of every error the library returns for a failed call:
// the gRPC code and the server's message. Each case a program acts on differently
// has a type of its own wrapping it (DecryptionFailedError, UnavailableError, ...);
// errors.As finds either:
//
//	var failed *sealbox.DecryptionFailedError // this case only
//	var any *sealbox.SealboxError             // every error from sealbox
//
// Errors of the caller's own (a file that cannot be read, say) are returned as
// they are, without this wrapping.
type SealboxError struct {
	// Code is the gRPC status code: the server's, or the one the library gives an
	// error of its own (DataLoss for a ChecksumError, InvalidArgument for an
	// EnvelopeFormatError and for an envelope segment that does not verify).
	Code codes.Code
	// Message is the server's message (or the library's), e.g. "decryption failed".
	Message string
}

// Error spells the code as the .proto files do: "NOT_FOUND: no key ...".
func (e *SealboxError) Error() string { return CodeName(e.Code) + ": " + e.Message }

// GRPCStatus lets status.Convert and status.Code read the error's code and message.
func (e *SealboxError) GRPCStatus() *status.Status { return status.New(e.Code, e.Message) }

// DecryptionFailedError: the ciphertext did not authenticate (wrong key, other
// associated data, a changed or truncated ciphertext), recognised from the status
// details' google.rpc.ErrorInfo (domain "sealbox.v1", reason "DECRYPTION_FAILED"),
// never from the message. Never retried: each one counts against the key's
// decryption-failure limit. An envelope segment that does not verify is one too.
type DecryptionFailedError struct{ *SealboxError }

// ChecksumError: an answer whose bytes do not match its CRC32C, or that does not
// confirm the server checked the request's. Nothing is returned with it.
type ChecksumError struct{ *SealboxError }

// UnauthenticatedError: no token, or an unknown, revoked or expired one.
type UnauthenticatedError struct{ *SealboxError }

// PermissionDeniedError: outside the token's scope, or the admin token was sent.
type PermissionDeniedError struct{ *SealboxError }

// NotFoundError: the tenant has no key of that name.
type NotFoundError struct{ *SealboxError }

// InvalidArgumentError: a malformed request (a failed decryption is a
// DecryptionFailedError instead), including a request checksum the server found
// wrong ("checksum mismatch").
type InvalidArgumentError struct{ *SealboxError }

// FailedPreconditionError: the key or its version is disabled, or a token that
// cannot renew.
type FailedPreconditionError struct{ *SealboxError }

// ResourceExhaustedError: too many failed authentications from this address, too
// many failed decryptions under the key, or a message too large.
type ResourceExhaustedError struct{ *SealboxError }

// UnavailableError: the server is starting, stopping or unreachable, or its
// keystore is stale. Retried where safe (see RetryPolicy) before it is returned.
type UnavailableError struct{ *SealboxError }

// DeadlineExceededError: the call's deadline passed (across all its attempts).
type DeadlineExceededError struct{ *SealboxError }

// EnvelopeFormatError: not an envelope file, or a damaged header.
type EnvelopeFormatError struct{ *SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *DecryptionFailedError) Unwrap() error { return e.SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *ChecksumError) Unwrap() error { return e.SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *UnauthenticatedError) Unwrap() error { return e.SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *PermissionDeniedError) Unwrap() error { return e.SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *NotFoundError) Unwrap() error { return e.SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *InvalidArgumentError) Unwrap() error { return e.SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *FailedPreconditionError) Unwrap() error { return e.SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *ResourceExhaustedError) Unwrap() error { return e.SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *UnavailableError) Unwrap() error { return e.SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *DeadlineExceededError) Unwrap() error { return e.SealboxError }

// Unwrap gives errors.As and errors.Is the SealboxError underneath.
func (e *EnvelopeFormatError) Unwrap() error { return e.SealboxError }

const (
	errorDomain            = "sealbox.v1"
	reasonDecryptionFailed = "DECRYPTION_FAILED"
)

// newError is the one place a code, a message and a decryption-failure flag
// become the error type for the case.
func newError(code codes.Code, message string, decryptionFailed bool) error {
	base := &SealboxError{Code: code, Message: message}
	if decryptionFailed {
		return &DecryptionFailedError{base}
	}
	switch code {
	case codes.Unauthenticated:
		return &UnauthenticatedError{base}
	case codes.PermissionDenied:
		return &PermissionDeniedError{base}
	case codes.NotFound:
		return &NotFoundError{base}
	case codes.InvalidArgument:
		return &InvalidArgumentError{base}
	case codes.FailedPrecondition:
		return &FailedPreconditionError{base}
	case codes.ResourceExhausted:
		return &ResourceExhaustedError{base}
	case codes.Unavailable:
		return &UnavailableError{base}
	case codes.DeadlineExceeded:
		return &DeadlineExceededError{base}
	}
	return base
}

// fromRPC converts what a gRPC call returned into the library's error: the code,
// the message, and whether the status details name a failed decryption.
func fromRPC(err error) error {
	if err == nil {
		return nil
	}
	var ours *SealboxError
	if errors.As(err, &ours) {
		return err // already converted (a checksum error, say)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return newError(codes.DeadlineExceeded, err.Error(), false)
	case errors.Is(err, context.Canceled):
		return newError(codes.Canceled, err.Error(), false)
	}
	s, ok := status.FromError(err)
	if !ok {
		return err // the caller's own (a file that cannot be read): as it is
	}
	return newError(s.Code(), s.Message(), isDecryptionFailure(s))
}

// isDecryptionFailure reads the status details, never the message.
func isDecryptionFailure(s *status.Status) bool {
	for _, detail := range s.Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok &&
			info.Domain == errorDomain && info.Reason == reasonDecryptionFailed {
			return true
		}
	}
	return false
}

func checksumError(format string, args ...interface{}) error {
	return &ChecksumError{&SealboxError{Code: codes.DataLoss, Message: fmt.Sprintf(format, args...)}}
}

func envelopeFormatError(format string, args ...interface{}) error {
	return &EnvelopeFormatError{&SealboxError{Code: codes.InvalidArgument,
		Message: "envelope: " + fmt.Sprintf(format, args...)}}
}

// CodeName spells a gRPC code as the .proto files and the other sealbox clients
// do (NOT_FOUND), not as codes.Code's String does (NotFound).
func CodeName(c codes.Code) string {
	if c == codes.Canceled {
		return "CANCELLED" // Go spells it with one L; gRPC's name has two
	}
	var b strings.Builder
	lower := false // whether the previous letter was lower case: a word ends there
	for _, r := range c.String() {
		if lower && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		lower = unicode.IsLower(r)
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// ErrorTypeName is the name of the error's type in this package
// ("DecryptionFailedError", ..., "SealboxError"), as every sealbox library names
// it; "" for an error that is not sealbox's. It looks through wrapping (%w).
func ErrorTypeName(err error) string {
	ours := reflect.TypeOf(SealboxError{}).PkgPath()
	for ; err != nil; err = errors.Unwrap(err) {
		// The first of ours is the most specific: each case wraps the base.
		if t := reflect.TypeOf(err); t.Kind() == reflect.Ptr && t.Elem().PkgPath() == ours {
			return t.Elem().Name()
		}
	}
	return ""
}
