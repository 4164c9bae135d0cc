// Command sealbox-example is a short user of the sealbox Go client library
// (client/go, import path sealbox.dev/go/sealbox):
//
//	sealbox-example seal|open|seal-stream|open-stream|seal-envelope|open-envelope \
//	    --key KEY [--aad TEXT] IN OUT
//
// seal and open make one unary call on a small file; seal-stream and open-stream
// go file to file through the streams; seal-envelope and open-envelope write and
// read envelope files. The server is $SEALBOX_SERVER (default 127.0.0.1:50051),
// the token $SEALBOX_TOKEN. Exit status 0 on success; on an error, one line
// "sealbox-example: <ErrorTypeName>: <message>" on stderr and exit status 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"sealbox.dev/go/sealbox"
)

const usage = "usage: %s seal|open|seal-stream|open-stream|seal-envelope|open-envelope " +
	"--key KEY [--aad TEXT] IN OUT"

// usageError is a mistake on the command line.
type usageError struct{ message string }

func (e usageError) Error() string { return e.message }

func main() {
	program := filepath.Base(os.Args[0])
	if err := run(program, os.Args[1:]); err != nil {
		name := sealbox.ErrorTypeName(err)
		message := err.Error()
		var base *sealbox.SealboxError
		var bad usageError
		switch {
		case errors.As(err, &base):
			message = base.Message
		case errors.As(err, &bad):
			name, message = "UsageError", bad.message+"; "+fmt.Sprintf(usage, program)
		default:
			name = "Error"
		}
		fmt.Fprintf(os.Stderr, "%s: %s: %s\n", program, name, strings.ReplaceAll(message, "\n", " "))
		os.Exit(1)
	}
}

func run(program string, args []string) error {
	if len(args) == 0 {
		return usageError{"no command given"}
	}
	command := args[0]
	flags := flag.NewFlagSet(command, flag.ContinueOnError)
	flags.SetOutput(io.Discard) // reported once, by main
	key := flags.String("key", "", "")
	aad := flags.String("aad", "", "")
	if err := flags.Parse(args[1:]); err != nil {
		return usageError{err.Error()}
	}
	if *key == "" || flags.NArg() != 2 {
		return usageError{"--key and two files (IN OUT) are needed"}
	}
	in, out := flags.Arg(0), flags.Arg(1)

	server := os.Getenv("SEALBOX_SERVER")
	if server == "" {
		server = "127.0.0.1:50051"
	}
	client, err := sealbox.New(server, sealbox.WithToken(os.Getenv("SEALBOX_TOKEN")))
	if err != nil {
		return err
	}
	defer client.Close()
	// Ctrl-C stops the work (and removes a partial output file).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch command {
	case "seal", "open":
		data, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		var result []byte
		if command == "seal" {
			sealed, err := client.Seal(ctx, *key, data, []byte(*aad))
			if err != nil {
				return err
			}
			result = sealed.Ciphertext
		} else {
			opened, err := client.Open(ctx, *key, data, []byte(*aad))
			if err != nil {
				return err
			}
			result = opened.Plaintext
		}
		return os.WriteFile(out, result, 0o600)
	case "seal-stream":
		_, err = client.SealFile(ctx, *key, []byte(*aad), in, out)
	case "open-stream":
		_, err = client.OpenFile(ctx, *key, []byte(*aad), in, out)
	case "seal-envelope":
		_, err = client.SealEnvelopeFile(ctx, *key, []byte(*aad), in, out)
	case "open-envelope":
		_, err = client.OpenEnvelopeFile(ctx, *key, []byte(*aad), in, out)
	default:
		return usageError{fmt.Sprintf("unknown command %q", command)}
	}
	return err
}
