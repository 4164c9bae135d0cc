package sealbox

// CRC32C (Castagnoli) both ways on every unary and batch call: each request
// carries the checksum of its payload and associated data, which the server checks
// before any work, and each answer must say the server checked them (verified_*)
// and carry its output's checksum, checked here. A byte flipped anywhere between
// this process's memory and the server's is then an error, never data.

import (
	"hash/crc32"

	"github.com/golang/protobuf/ptypes/wrappers"

	pb "sealbox.dev/go/sealbox/internal/sealboxv1"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C is the checksum sealbox uses on the wire (Castagnoli, as in iSCSI).
func CRC32C(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// checksum is a request's CRC32C field: a wrapper message, so that 0 is a
// checksum too and a missing field means "not given".
func checksum(b []byte) *wrappers.UInt32Value { return &wrappers.UInt32Value{Value: CRC32C(b)} }

func sealRequest(key string, plaintext, aad []byte) *pb.SealRequest {
	return &pb.SealRequest{Key: key, Plaintext: plaintext, AssociatedData: aad,
		PlaintextCrc32C: checksum(plaintext), AssociatedDataCrc32C: checksum(aad)}
}

func openRequest(key string, ciphertext, aad []byte) *pb.OpenRequest {
	return &pb.OpenRequest{Key: key, Ciphertext: ciphertext, AssociatedData: aad,
		CiphertextCrc32C: checksum(ciphertext), AssociatedDataCrc32C: checksum(aad)}
}

func rewrapRequest(key string, ciphertext, aad []byte) *pb.RewrapRequest {
	return &pb.RewrapRequest{Key: key, Ciphertext: ciphertext, AssociatedData: aad,
		CiphertextCrc32C: checksum(ciphertext), AssociatedDataCrc32C: checksum(aad)}
}

// verifySealed, verifyOpened, verifyRewrapped and verifyDataKey check one answer:
// the server checked both of the request's checksums, and the output arrived as
// the server sent it.
func verifySealed(r *pb.SealResponse) error {
	if !r.GetVerifiedPlaintextCrc32C() || !r.GetVerifiedAssociatedDataCrc32C() {
		return checksumError("the server did not confirm it checked the request's checksums")
	}
	if CRC32C(r.GetCiphertext()) != r.GetCiphertextCrc32C() {
		return checksumError("the ciphertext does not match its CRC32C: damaged on the way")
	}
	return nil
}

func verifyOpened(r *pb.OpenResponse) error {
	if !r.GetVerifiedCiphertextCrc32C() || !r.GetVerifiedAssociatedDataCrc32C() {
		return checksumError("the server did not confirm it checked the request's checksums")
	}
	if CRC32C(r.GetPlaintext()) != r.GetPlaintextCrc32C() {
		return checksumError("the plaintext does not match its CRC32C: damaged on the way")
	}
	return nil
}

func verifyRewrapped(r *pb.RewrapResponse) error {
	if !r.GetVerifiedCiphertextCrc32C() || !r.GetVerifiedAssociatedDataCrc32C() {
		return checksumError("the server did not confirm it checked the request's checksums")
	}
	if CRC32C(r.GetCiphertext()) != r.GetCiphertextCrc32C() {
		return checksumError("the ciphertext does not match its CRC32C: damaged on the way")
	}
	return nil
}

func verifyDataKey(r *pb.GenerateDataKeyResponse) error {
	if !r.GetVerifiedAssociatedDataCrc32C() {
		return checksumError("the server did not confirm it checked the request's checksum")
	}
	if CRC32C(r.GetCiphertext()) != r.GetCiphertextCrc32C() || CRC32C(r.GetPlaintext()) != r.GetPlaintextCrc32C() {
		return checksumError("the data key does not match its CRC32C: damaged on the way")
	}
	return nil
}
