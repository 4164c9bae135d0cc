package sealbox

// The library against the client contract, without a server:
// client/contract/contract.json (retry policy, error table, envelope numbers) and
// the static vectors beside it, which build.sh copies into testdata/contract.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/golang/protobuf/proto"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "sealbox.dev/go/sealbox/internal/sealboxv1"
)

const contractDir = "testdata/contract"

type errorRow struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
	Case   string `json:"case"`
	Go     string `json:"go"`
}

type contract struct {
	ServiceConfig struct {
		MethodConfig []struct {
			RetryPolicy struct {
				MaxAttempts          int      `json:"maxAttempts"`
				InitialBackoff       string   `json:"initialBackoff"`
				MaxBackoff           string   `json:"maxBackoff"`
				BackoffMultiplier    float64  `json:"backoffMultiplier"`
				RetryableStatusCodes []string `json:"retryableStatusCodes"`
			} `json:"retryPolicy"`
		} `json:"methodConfig"`
	} `json:"serviceConfig"`
	Retry struct {
		NeverRetriedReasons []string `json:"neverRetriedReasons"`
	} `json:"retry"`
	Errors struct {
		Domain            string            `json:"domain"`
		ItemReasonNumbers map[string]int32  `json:"itemReasonNumbers"`
		Base              map[string]string `json:"base"`
		FromServer        []errorRow        `json:"fromServer"`
		FromLibrary       []errorRow        `json:"fromLibrary"`
	} `json:"errors"`
	Envelope map[string]int `json:"envelope"`
}

type vectors struct {
	Envelope struct {
		DataKey string `json:"dataKey"`
		Cases   []struct {
			File            string `json:"file"`
			Expect          string `json:"expect"`
			PlaintextSha256 string `json:"plaintextSha256"`
		} `json:"cases"`
	} `json:"envelope"`
	StatusDetails struct {
		Cases []struct {
			Name             string `json:"name"`
			Hex              string `json:"hex"`
			DecryptionFailed bool   `json:"decryptionFailed"`
		} `json:"cases"`
	} `json:"statusDetails"`
	ItemErrors struct {
		Cases []struct {
			Code   string `json:"code"`
			Reason int32  `json:"reason"`
			Expect string `json:"expect"`
		} `json:"cases"`
	} `json:"itemErrors"`
}

func readJSON(t *testing.T, name string, v interface{}) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(contractDir, name))
	if err != nil {
		t.Fatalf("%v (build.sh copies client/contract into testdata/)", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// codeOf is the code the contract spells as the .proto files do (NOT_FOUND).
func codeOf(t *testing.T, name string) codes.Code {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if CodeName(c) == name {
			return c
		}
	}
	t.Fatalf("no gRPC code %s", name)
	return 0
}

func loadContract(t *testing.T) (*contract, *vectors) {
	var c contract
	var v vectors
	readJSON(t, "contract.json", &c)
	readJSON(t, "vectors/vectors.json", &v)
	return &c, &v
}

func TestContractRetryPolicy(t *testing.T) {
	c, _ := loadContract(t)
	want := c.ServiceConfig.MethodConfig[0].RetryPolicy
	initial, err1 := time.ParseDuration(want.InitialBackoff)
	max, err2 := time.ParseDuration(want.MaxBackoff)
	if err1 != nil || err2 != nil {
		t.Fatalf("durations: %v %v", err1, err2)
	}
	p := DefaultRetryPolicy
	if p.MaxAttempts != want.MaxAttempts || p.InitialBackoff != initial || p.MaxBackoff != max {
		t.Errorf("DefaultRetryPolicy %+v, the contract says %+v", p, want)
	}
	for n := 1; n < want.MaxAttempts; n++ {
		ceiling := time.Duration(math.Min(float64(max),
			float64(initial)*math.Pow(want.BackoffMultiplier, float64(n-1))))
		if got := p.backoffCap(n); got != ceiling {
			t.Errorf("backoffCap(%d) = %v, want %v", n, got, ceiling)
		}
	}
	quick := RetryPolicy{MaxAttempts: want.MaxAttempts, InitialBackoff: time.Nanosecond,
		MaxBackoff: time.Nanosecond}
	for _, row := range c.Errors.FromServer {
		calls := 0
		_ = quick.run(context.Background(), nil, func(context.Context) error {
			calls++
			return newError(codeOf(t, row.Code), "x", row.Reason == reasonDecryptionFailed)
		})
		again := contains(want.RetryableStatusCodes, row.Code) &&
			!contains(c.Retry.NeverRetriedReasons, row.Reason)
		if wantCalls := map[bool]int{true: want.MaxAttempts, false: 1}[again]; calls != wantCalls {
			t.Errorf("%+v: %d attempts, want %d", row, calls, wantCalls)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestContractErrors(t *testing.T) {
	c, v := loadContract(t)
	if errorDomain != c.Errors.Domain {
		t.Errorf("errorDomain %q, contract %q", errorDomain, c.Errors.Domain)
	}
	if int32(pb.ErrorReason_DECRYPTION_FAILED) != c.Errors.ItemReasonNumbers[reasonDecryptionFailed] {
		t.Errorf("ErrorReason DECRYPTION_FAILED is %d", pb.ErrorReason_DECRYPTION_FAILED)
	}
	rowType := map[string]string{}
	for _, row := range c.Errors.FromServer {
		err := newError(codeOf(t, row.Code), "m", row.Reason == reasonDecryptionFailed)
		if got := ErrorTypeName(err); got != row.Go {
			t.Errorf("%+v: %s", row, got)
		}
		var base *SealboxError
		if !errors.As(err, &base) || base.Code != codeOf(t, row.Code) {
			t.Errorf("%+v: no %s with its code", row, c.Errors.Base["go"])
		}
		if row.Reason != "" {
			rowType[row.Reason] = row.Go
		} else {
			rowType[row.Code] = row.Go
		}
	}
	for _, item := range v.ItemErrors.Cases {
		err := itemError(&pb.ItemError{Code: int32(codeOf(t, item.Code)), Message: "m",
			Reason: pb.ErrorReason(item.Reason)})
		if got := ErrorTypeName(err); got != rowType[item.Expect] {
			t.Errorf("item %+v: %s, want %s", item, got, rowType[item.Expect])
		}
	}
	made := map[string]error{"answer checksum wrong": checksumError("x"),
		"not an envelope file": envelopeFormatError("x"), "envelope segment does not verify": segmentError("x")}
	for _, row := range c.Errors.FromLibrary {
		err := made[row.Case]
		var base *SealboxError
		if ErrorTypeName(err) != row.Go || !errors.As(err, &base) || base.Code != codeOf(t, row.Code) {
			t.Errorf("%+v: %v", row, err)
		}
	}
	for _, d := range v.StatusDetails.Cases {
		blob, _ := hex.DecodeString(d.Hex)
		// grpc-go decodes grpc-status-details-bin into a google.rpc.Status; a blob it
		// cannot decode carries no details.
		var s spb.Status
		got := proto.Unmarshal(blob, &s) == nil && isDecryptionFailure(status.FromProto(&s))
		if got != d.DecryptionFailed {
			t.Errorf("status details %s: %v", d.Name, got)
		}
	}
}

func TestContractEnvelope(t *testing.T) {
	c, v := loadContract(t)
	e := c.Envelope
	for name, got := range map[string]int{"format": envelopeFormat,
		"writerSegmentBytes": EnvelopeSegmentSize, "minSegmentBytes": minSegment,
		"maxSegmentBytes": maxSegment, "minSealedKeyBytes": minSealedKey,
		"maxSealedKeyBytes": maxSealedKey, "fixedHeaderBytes": fixedHeader,
		"segmentAadBytes": segmentAADBytes, "tagBytes": tagBytes, "dataKeyBytes": dataKeyBytes} {
		if want, ok := e[name]; !ok || got != want {
			t.Errorf("envelope %s: %d, the contract says %d", name, got, want)
		}
	}
	dataKey, _ := hex.DecodeString(v.Envelope.DataKey)
	for _, vector := range v.Envelope.Cases {
		file, err := os.ReadFile(filepath.Join(contractDir, "vectors", vector.File))
		if err != nil {
			t.Fatal(err)
		}
		var asked [][]byte
		var out bytes.Buffer
		_, err = openEnvelope(context.Background(), func(sealedKey []byte) (*Opened, error) {
			asked = append(asked, append([]byte(nil), sealedKey...))
			return &Opened{Plaintext: append([]byte(nil), dataKey...), KeyVersion: 1}, nil
		}, bytes.NewReader(file), &out)
		got := "ok"
		var failed *DecryptionFailedError
		var damaged *EnvelopeFormatError
		switch {
		case errors.As(err, &failed):
			got = "DecryptionFailed"
		case errors.As(err, &damaged):
			got = "EnvelopeFormat"
		case err != nil:
			got = err.Error()
		}
		if got != vector.Expect {
			t.Errorf("%s: %s, want %s", vector.File, got, vector.Expect)
			continue
		}
		switch vector.Expect {
		case "ok":
			sum := sha256.Sum256(out.Bytes())
			length := int(binary.BigEndian.Uint16(file[e["sealedKeyLengthOffset"]:]))
			start := e["fixedHeaderBytes"]
			if hex.EncodeToString(sum[:]) != vector.PlaintextSha256 || len(asked) != 1 ||
				!bytes.Equal(asked[0], file[start:start+length]) {
				t.Errorf("%s: wrong plaintext or sealed key", vector.File)
			}
		case "EnvelopeFormat":
			if len(asked) != 0 {
				t.Errorf("%s: Open called for a damaged header", vector.File)
			}
		}
	}
}
