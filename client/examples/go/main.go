// Command sealbox-example is a small sealbox client in Go: Seal and Open with
// CRC32C checksums, a stream, a batch, and envelope encryption of files.
//
// It is built offline in GOPATH mode against Debian's Go packages, with the gRPC
// stubs generated from proto/sealbox/v1/data.proto at build time: see build.sh and
// README.md. It mirrors client/examples/python and client/examples/node.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"sealbox.example/envelope"
	pb "sealbox.example/sealboxv1"
)

const usage = `usage: sealbox-example demo [flags]
       sealbox-example envelope seal [flags] IN OUT
       sealbox-example envelope open [flags] IN OUT

  demo           Seal and Open with CRC32C checksums, a SealStream/OpenStream round
                 trip of 3 MiB, and a SealBatch with one bad item, opened again
                 with OpenBatch
  envelope seal  encrypt the file IN here, under a fresh data key from
                 GenerateDataKey, into the envelope file OUT (docs/FORMAT.md,
                 "Envelope file"); only the data key goes to the service
  envelope open  decrypt the envelope file IN into OUT; OUT appears only once
                 every segment verified

flags (before IN and OUT):
  --server HOST:PORT   the sealbox server, plaintext gRPC (default 127.0.0.1:50051)
  --key NAME           key name of the caller's tenant (default "default")
  --aad TEXT           envelope only: associated data the data key is bound to;
                       opening needs the same (default none)
  --timeout DURATION   deadline of each call, e.g. 30s (default 60s)

The tenant token is read from the SEALBOX_TOKEN environment variable.
Exit status: 0 on success, 1 on any failure, 2 on a usage error.`

// usageError is a mistake on the command line: exit status 2, with the usage.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	err := run(os.Args[1:])
	var u usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		fmt.Println(usage)
	case errors.As(err, &u):
		fmt.Fprintf(os.Stderr, "sealbox-example: %s\n%s\n", u.msg, usage)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "sealbox-example: %s\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	command, args := commandOf(args)
	var positionals int
	switch command {
	case "demo":
	case "envelope seal", "envelope open":
		positionals = 2
	case "help", "-h", "--help", "-help":
		return flag.ErrHelp
	case "":
		return usageError{"no command given"}
	case "envelope":
		return usageError{"envelope takes seal or open"}
	default:
		return usageError{fmt.Sprintf("unknown command %q", command)}
	}

	flags := flag.NewFlagSet(command, flag.ContinueOnError)
	flags.SetOutput(io.Discard) // errors are reported once, below, with the usage
	server := flags.String("server", "127.0.0.1:50051", "")
	key := flags.String("key", "default", "")
	aad := flags.String("aad", "", "")
	timeout := flags.Duration("timeout", 60*time.Second, "")
	if err := flags.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usageError{err.Error()}
	}
	if flags.NArg() != positionals {
		return usageError{fmt.Sprintf("%s takes %d file arguments, not %d", command, positionals, flags.NArg())}
	}
	if *timeout <= 0 {
		return usageError{"--timeout must be positive"}
	}
	if command == "demo" && *aad != "" {
		return usageError{"--aad is for envelope seal and open"}
	}
	token := os.Getenv("SEALBOX_TOKEN")
	if token == "" {
		return errors.New("set SEALBOX_TOKEN to a tenant token")
	}

	// Plaintext gRPC, as the dev server speaks (grpc-go 1.33 has no
	// credentials/insecure yet); give credentials.NewTLS(...) for a real deployment.
	// Dial does not connect: a server that is not there fails the first call.
	conn, err := grpc.Dial(*server, grpc.WithInsecure())
	if err != nil {
		return err
	}
	defer conn.Close()
	c := &client{crypto: pb.NewCryptoClient(conn), key: *key, timeout: *timeout}

	// Every call carries the token; Ctrl-C stops the work (and removes a partial
	// output file) instead of killing the process mid-write.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)

	switch in, out := flags.Arg(0), flags.Arg(1); command {
	case "envelope seal":
		if err := envelope.SealFile(ctx, c, []byte(*aad), in, out); err != nil {
			return err
		}
		fmt.Printf("envelope: sealed %s into %s\n", in, out)
	case "envelope open":
		if err := envelope.OpenFile(ctx, c, []byte(*aad), in, out); err != nil {
			return err
		}
		fmt.Printf("envelope: opened %s into %s, every segment verified\n", in, out)
	default:
		return demo(ctx, c)
	}
	return nil
}

// commandOf splits off the command: "demo", or "envelope seal" / "envelope open".
func commandOf(args []string) (string, []string) {
	switch {
	case len(args) == 0:
		return "", nil
	case args[0] == "envelope" && len(args) > 1 && (args[1] == "seal" || args[1] == "open"):
		return "envelope " + args[1], args[2:]
	default:
		return args[0], args[1:]
	}
}
