package sealbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	pb "sealbox.dev/go/sealbox/internal/sealboxv1"
)

// DefaultTimeout is the deadline of a unary or batch call whose context has none.
const DefaultTimeout = 30 * time.Second

// Client calls one sealbox server over one gRPC channel. It is safe for
// concurrent use by many goroutines; make one per server and share it.
type Client struct {
	conn    *grpc.ClientConn
	crypto  pb.CryptoClient
	timeout time.Duration
	retry   RetryPolicy
	tokens  *tokenState
}

// Option configures New.
type Option func(*settings)

type settings struct {
	token                     string
	caFile, certFile, keyFile string
	serverName                string
	forceTLS, insecure        bool
	timeout                   time.Duration
	retry                     RetryPolicy
	renewal                   *TokenRenewal
	dialOptions               []grpc.DialOption
}

// WithToken authenticates every call with `authorization: Bearer <token>`.
func WithToken(token string) Option { return func(s *settings) { s.token = token } }

// WithTLS uses TLS even to a loopback address (TLS is the default to any other
// host), verified against the system's roots unless WithCAFile names a CA.
func WithTLS() Option { return func(s *settings) { s.forceTLS = true } }

// WithCAFile verifies the server's certificate against the CA certificates
// (PEM) in path instead of the system's roots. Implies TLS.
func WithCAFile(path string) Option { return func(s *settings) { s.caFile = path } }

// WithClientCertificate presents this certificate and key (PEM files) for mTLS;
// the server maps the certificate to a tenant, so no token is needed. Implies TLS.
func WithClientCertificate(certFile, keyFile string) Option {
	return func(s *settings) { s.certFile, s.keyFile = certFile, keyFile }
}

// WithServerName checks the server's certificate for this name instead of the
// address's host. Implies TLS.
func WithServerName(name string) Option { return func(s *settings) { s.serverName = name } }

// WithInsecure speaks plaintext gRPC to a host that is not loopback, as the
// sealbox CLI's --insecure does. Only for networks where nobody can listen.
func WithInsecure() Option { return func(s *settings) { s.insecure = true } }

// WithTimeout sets the deadline of a unary or batch call whose context has none
// (DefaultTimeout, 30 s, unless set); 0 means none. Streams, files and envelope
// files get no default deadline: give their context one if they need it.
func WithTimeout(d time.Duration) Option { return func(s *settings) { s.timeout = d } }

// WithRetryPolicy replaces DefaultRetryPolicy; its zero fields take the defaults.
func WithRetryPolicy(p RetryPolicy) Option { return func(s *settings) { s.retry = p } }

// WithTokenRenewal renews the token before it expires: see TokenRenewal.
func WithTokenRenewal(r TokenRenewal) Option { return func(s *settings) { s.renewal = &r } }

// WithDialOptions adds gRPC dial options after the library's own (an interceptor,
// say). Transport security is the library's: use the TLS options for it.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(s *settings) { s.dialOptions = append(s.dialOptions, opts...) }
}

// New makes a client of the server at address ("host:port"). Like grpc.Dial, it
// does not wait for a connection: a server that is not there fails the first call
// (after its retries). Transport: plaintext to a loopback address, TLS to any
// other, or when a TLS option is given; WithInsecure for plaintext elsewhere.
func New(address string, opts ...Option) (*Client, error) {
	s := settings{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&s)
	}
	transport, err := transportCredentials(address, &s)
	if err != nil {
		return nil, err
	}
	dial := []grpc.DialOption{
		transport,
		// Reconnect quickly after a server restart, so that retries find it: at
		// least once a second (gRPC's default grows to two minutes).
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6,
				Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 5 * time.Second}),
		// A stream answer carries up to a 4 MiB segment and its tag.
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16 << 20)),
	}
	conn, err := grpc.Dial(address, append(dial, s.dialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("sealbox: %w", err)
	}
	return &Client{
		conn:    conn,
		crypto:  pb.NewCryptoClient(conn),
		timeout: s.timeout,
		retry:   s.retry.withDefaults(),
		tokens:  newTokenState(s.token, s.renewal),
	}, nil
}

// Close closes the channel; calls in flight fail.
func (c *Client) Close() error { return c.conn.Close() }

// Token is the token calls carry now: the one given to New, or its latest
// successor from RenewToken.
func (c *Client) Token() string { return c.tokens.current() }

func transportCredentials(address string, s *settings) (grpc.DialOption, error) {
	wantsTLS := s.forceTLS || s.caFile != "" || s.certFile != "" || s.serverName != ""
	if s.insecure {
		if wantsTLS {
			return nil, errors.New("sealbox: WithInsecure together with a TLS option")
		}
		return grpc.WithInsecure(), nil
	}
	if !wantsTLS && isLoopback(address) {
		return grpc.WithInsecure(), nil // grpc-go 1.33 has no credentials/insecure yet
	}
	config := &tls.Config{ServerName: s.serverName, MinVersion: tls.VersionTLS12}
	if s.caFile != "" {
		pem, err := os.ReadFile(s.caFile)
		if err != nil {
			return nil, fmt.Errorf("sealbox: reading the CA file: %w", err)
		}
		config.RootCAs = x509.NewCertPool()
		if !config.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("sealbox: no PEM certificate in %s", s.caFile)
		}
	}
	if s.certFile != "" || s.keyFile != "" {
		cert, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
		if err != nil {
			return nil, fmt.Errorf("sealbox: loading the client certificate: %w", err)
		}
		config.Certificates = []tls.Certificate{cert}
	}
	return grpc.WithTransportCredentials(credentials.NewTLS(config)), nil
}

// isLoopback: "localhost", 127.0.0.0/8 or ::1 (with a port), or a unix socket.
func isLoopback(address string) bool {
	if strings.HasPrefix(address, "unix:") {
		return true
	}
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		host = address
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// callKind says what a call may do besides its one attempt.
type callKind struct {
	retry bool // retried on UNAVAILABLE (see RetryPolicy)
	renew bool // the token renewed first when due (all but RenewToken itself)
	unary bool // the default deadline applies
}

var (
	unaryKind  = callKind{retry: true, renew: true, unary: true}
	streamKind = callKind{retry: true, renew: true}
)

// do runs one call: the default deadline when ctx has none, the token renewed
// first when due, then attempts with the current token until one succeeds, fails
// otherwise than UNAVAILABLE, or the retries (within the deadline) are spent.
// canRetry, when given, may refuse a retry (a stream that already answered).
func (c *Client) do(ctx context.Context, kind callKind, canRetry func() bool,
	attempt func(ctx context.Context) error) error {
	if kind.unary && c.timeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.timeout)
			defer cancel()
		}
	}
	if kind.renew {
		c.renewIfDue(ctx)
	}
	authorized := func(ctx context.Context) error {
		if token := c.tokens.current(); token != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
		}
		return attempt(ctx)
	}
	if !kind.retry {
		return fromRPC(authorized(ctx))
	}
	return c.retry.run(ctx, canRetry, authorized)
}
