module sealbox.dev/go/sealbox

// The versions Debian 12 packages, which `build.sh --module` vendors offline from
// /usr/share/gocode (docs/clients/GO.md, "As a Go module"). With the module proxy,
// `go mod tidy` raises them to what grpc-go 1.33 itself requires.
go 1.19

require (
	github.com/golang/protobuf v1.3.5
	google.golang.org/genproto v0.0.0-20200413115906-b5235f65be36
	google.golang.org/grpc v1.33.3
)

require (
	golang.org/x/net v0.7.0 // indirect
	golang.org/x/sys v0.3.0 // indirect
	golang.org/x/text v0.7.0 // indirect
)
