// apiserver-standin: kube-apiserver's side of the Kubernetes KMS v2 protocol, for
// sealbox's tests (tests/kms). No kube-apiserver is packaged for Debian; this does
// what its kmsv2 envelope code does with a plugin, and says where it differs
// (tests/kms/README.md):
//
//	status  Status, checked as kube-apiserver checks it
//	seal    Status, a new seed wrapped by Encrypt (its key_id must be Status's),
//	        then --objects objects sealed locally with keys derived from the seed
//	open    a restarted API server: every stored object read back, each distinct
//	        wrapped seed opened once through Decrypt, --concurrency at a time
//	bench   --seeds distinct seeds wrapped, then all opened through Decrypt with
//	        --concurrency callers: the start-up burst, timed; with --tcp, the same
//	        seeds also sealed by unary Seal and timed through unary Open over TCP,
//	        in turn with the Decrypts, --rounds times
//
// Each prints one JSON line of figures; the exit status is 0 only when every call
// and check succeeded.
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: apiserver-standin status|seal|open|bench --socket PATH ...")
		os.Exit(2)
	}
	command := os.Args[1]
	flags := flag.NewFlagSet(command, flag.ExitOnError)
	socket := flags.String("socket", "", "the plugin's unix socket")
	timeout := flags.Duration("timeout", 3*time.Second, "each call's timeout (kube-apiserver's default)")
	store := flags.String("store", "", "seal/open: the file objects are kept in (JSON lines)")
	objects := flags.Int("objects", 10000, "seal: objects to seal")
	prefix := flags.String("prefix", "/registry/secrets/default/", "seal: the objects' etcd keys")
	pause := flags.String("pause-after-status", "", "seal: wait after Status until this file exists")
	concurrency := flags.Int("concurrency", 50, "open/bench: Decrypt calls at once")
	seeds := flags.Int("seeds", 10000, "bench: distinct seeds")
	rounds := flags.Int("rounds", 1, "bench: timed passes over the seeds")
	tcp := flags.String("tcp", "", "bench: sealbox's TCP address, to time unary Open beside Decrypt")
	tokenFile := flags.String("token-file", "", "bench --tcp: a data token for --key")
	key := flags.String("key", "", "bench --tcp: the socket's key (KEY; the token names the tenant)")
	flags.Parse(os.Args[2:])
	if *socket == "" {
		fail("--socket is required")
	}
	p, err := dial(*socket, *timeout)
	if err != nil {
		fail(err.Error())
	}
	switch command {
	case "status":
		keyID, err := p.status()
		report(err == nil, map[string]interface{}{"key_id": keyID, "error": errText(err)})
	case "seal":
		sealObjects(p, *store, *objects, *prefix, *pause)
	case "open":
		openObjects(p, *store, *concurrency)
	case "bench":
		var baseline *unaryBaseline
		if *tcp != "" {
			if baseline, err = dialBaseline(*tcp, *tokenFile, *key, *timeout); err != nil {
				fail(err.Error())
			}
		}
		bench(p, *seeds, *concurrency, *rounds, baseline)
	default:
		fail("unknown command " + command)
	}
}

// payload is what object `name` holds, so that open can check it.
func payload(name string) []byte {
	sum := sha256.Sum256([]byte(name))
	return []byte(fmt.Sprintf("secret %s %x", name, sum))
}

func sealObjects(p *plugin, store string, count int, prefix, pause string) {
	keyID, err := p.status()
	if err != nil {
		report(false, map[string]interface{}{"stage": "status", "error": err.Error()})
	}
	if pause != "" {
		fmt.Println(`{"paused":true}`)
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(pause); err == nil {
				break
			}
			if time.Now().After(deadline) {
				fail("--pause-after-status: " + pause + " did not appear within 60 s")
			}
		}
	}
	seed, err := newSeed()
	if err != nil {
		fail(err.Error())
	}
	answer, err := p.encrypt(seed, "standin-seed", keyID)
	if err != nil {
		// kube-apiserver keeps its previous state and reports the plugin unhealthy.
		report(false, map[string]interface{}{"stage": "encrypt", "error": err.Error()})
	}
	state := &writeState{seed: seed, keyID: answer.KeyId, encryptedSeed: answer.Ciphertext,
		annotations: answer.Annotations}
	file, err := os.OpenFile(store, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0600)
	if err != nil {
		fail(err.Error())
	}
	out := bufio.NewWriter(file)
	encoder := json.NewEncoder(out)
	for i := 0; i < count; i++ {
		name := fmt.Sprintf("%s%s-%d", prefix, keyID[len(keyID)-8:], i)
		o, err := state.seal(name, payload(name))
		if err == nil {
			err = encoder.Encode(o)
		}
		if err != nil {
			fail(err.Error())
		}
	}
	if err := out.Flush(); err != nil {
		fail(err.Error())
	}
	if err := file.Close(); err != nil {
		fail(err.Error())
	}
	report(true, map[string]interface{}{"sealed": count, "key_id": keyID, "encrypt_calls": 1})
}

func openObjects(p *plugin, store string, concurrency int) {
	currentKeyID, statusErr := p.status()
	stored, err := readObjects(store)
	if err != nil {
		fail(err.Error())
	}
	// The cache of a restarted API server starts empty; one Decrypt per distinct
	// wrapped seed (and key_id and annotations) fills it.
	type source struct{ keyID, seed string }
	seeds := map[source][]byte{}
	var pending []*object
	for _, o := range stored {
		s := source{o.KeyID, string(o.EncryptedSeed)}
		if _, ok := seeds[s]; !ok {
			seeds[s] = nil
			pending = append(pending, o)
		}
	}
	opened := make([][]byte, len(pending))
	latencies, errs := callAll(len(pending), concurrency, func(i int) ([]byte, error) {
		o := pending[i]
		seed, err := p.decrypt(o.EncryptedSeed, o.KeyID, fmt.Sprintf("standin-%d", i), o.Annotations)
		opened[i] = seed // each worker its own index
		return seed, err
	})
	for i, o := range pending {
		seeds[source{o.KeyID, string(o.EncryptedSeed)}] = opened[i]
	}
	read, stale := 0, 0
	for _, o := range stored {
		seed := seeds[source{o.KeyID, string(o.EncryptedSeed)}]
		if seed == nil {
			continue
		}
		plaintext, err := openObject(seed, o)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if string(plaintext) != string(payload(o.Name)) {
			errs = append(errs, o.Name+": opened to the wrong plaintext")
			continue
		}
		read++
		if o.KeyID != currentKeyID {
			stale++ // kube-apiserver would rewrite it on the next storage migration
		}
	}
	report(read == len(stored) && len(errs) == 0, map[string]interface{}{
		"objects": len(stored), "opened": read, "decrypt_calls": len(pending), "stale": stale,
		"current_key_id": currentKeyID, "status_error": errText(statusErr),
		"decrypt_ms": percentiles(latencies), "errors": firstFew(errs),
	})
}

func bench(p *plugin, count, concurrency, rounds int, baseline *unaryBaseline) {
	keyID, err := p.status()
	if err != nil {
		report(false, map[string]interface{}{"stage": "status", "error": err.Error()})
	}
	wrapped := make([][]byte, count)
	sealed := make([][]byte, count)
	plain := make([][]byte, count)
	_, errs := callAll(count, concurrency, func(i int) ([]byte, error) {
		seed, err := newSeed()
		if err != nil {
			return nil, err
		}
		answer, err := p.encrypt(seed, fmt.Sprintf("bench-seed-%d", i), keyID)
		if err != nil {
			return nil, err
		}
		wrapped[i], plain[i] = answer.Ciphertext, seed
		if baseline != nil {
			sealed[i], err = baseline.seal(seed)
		}
		return nil, err
	})
	if len(errs) > 0 {
		report(false, map[string]interface{}{"stage": "encrypt", "errors": firstFew(errs)})
	}
	// Each round times every seed through Decrypt, then (with --tcp) through unary
	// Open, one after the other, so a noisy moment hits both alike.
	passes := map[string][]map[string]interface{}{}
	ok := true
	timed := func(name string, call func(i int) ([]byte, error)) {
		started := time.Now()
		latencies, errs := callAll(count, concurrency, func(i int) ([]byte, error) {
			seed, err := call(i)
			if err == nil && string(seed) != string(plain[i]) {
				err = fmt.Errorf("seed %d opened to another value", i)
			}
			return seed, err
		})
		took := time.Since(started)
		ok = ok && len(errs) == 0
		passes[name] = append(passes[name], map[string]interface{}{
			"calls_per_second": float64(count) / took.Seconds(), "ms": percentiles(latencies),
			"errors": firstFew(errs)})
	}
	for round := 0; round < rounds; round++ {
		timed("kms_decrypt", func(i int) ([]byte, error) {
			return p.decrypt(wrapped[i], keyID, fmt.Sprintf("bench-%d", i), nil)
		})
		if baseline != nil {
			timed("unary_open_tcp", func(i int) ([]byte, error) { return baseline.open(sealed[i]) })
		}
	}
	figures := map[string]interface{}{"seeds": count, "concurrency": concurrency, "rounds": rounds}
	for name, runs := range passes {
		figures[name] = map[string]interface{}{"median": medianRun(runs), "rounds": runs}
	}
	report(ok, figures)
}

// medianRun: the median over rounds of each figure (rate, p50, p99, max).
func medianRun(runs []map[string]interface{}) map[string]float64 {
	median := func(values []float64) float64 {
		sort.Float64s(values)
		return values[len(values)/2]
	}
	var rates []float64
	figures := map[string][]float64{}
	for _, run := range runs {
		rates = append(rates, run["calls_per_second"].(float64))
		for name, ms := range run["ms"].(map[string]float64) {
			figures[name] = append(figures[name], ms)
		}
	}
	out := map[string]float64{"calls_per_second": median(rates)}
	for name, values := range figures {
		out[name+"_ms"] = median(values)
	}
	return out
}

// callAll runs call(0..n-1) with `concurrency` at a time; the calls' latencies
// in milliseconds, and their errors.
func callAll(n, concurrency int, call func(int) ([]byte, error)) ([]float64, []string) {
	var mu sync.Mutex
	var latencies []float64
	var errs []string
	next := 0
	var wg sync.WaitGroup
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				started := time.Now()
				_, err := call(i)
				ms := float64(time.Since(started).Microseconds()) / 1000
				mu.Lock()
				latencies = append(latencies, ms)
				if err != nil {
					errs = append(errs, err.Error())
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return latencies, errs
}

func readObjects(path string) ([]*object, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var objects []*object
	decoder := json.NewDecoder(bufio.NewReader(file))
	for decoder.More() {
		o := &object{}
		if err := decoder.Decode(o); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objects = append(objects, o)
	}
	return objects, nil
}

// percentiles: p50, p99 (nearest rank) and max, in milliseconds.
func percentiles(values []float64) map[string]float64 {
	if len(values) == 0 {
		return map[string]float64{}
	}
	sort.Float64s(values)
	rank := func(f float64) float64 {
		i := int(f*float64(len(values))+0.999999) - 1
		if i < 0 {
			i = 0
		}
		return values[i]
	}
	return map[string]float64{"p50": rank(0.5), "p99": rank(0.99), "max": values[len(values)-1]}
}

func firstFew(errs []string) []string {
	if len(errs) > 5 {
		return append(errs[:5], fmt.Sprintf("... %d more", len(errs)-5))
	}
	return errs
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func report(ok bool, figures map[string]interface{}) {
	figures["ok"] = ok
	line, _ := json.Marshal(figures)
	fmt.Println(string(line))
	if !ok {
		os.Exit(1)
	}
	os.Exit(0)
}

func fail(message string) {
	fmt.Fprintln(os.Stderr, "apiserver-standin:", message)
	os.Exit(2)
}
