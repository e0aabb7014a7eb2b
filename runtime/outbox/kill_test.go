package outbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ordergen/ordergen/runtime/outbox"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
)

// childEnv carries the job of a relay in a child process: a JSON childJob.
const childEnv = "ORDERGEN_OUTBOX_CHILD"

type childJob struct {
	Dialect string
	DSN     string
	Entity  string
	Out     string // the file the child's sink appends a line to per event taken
	Stall   int    // the send (from 1) at which the sink stops answering
	Batch   int
}

// fileSink appends "key version" to a file for each event it takes, with
// one write each (an unbuffered file: a killed process loses none), and
// at send number stall says "stalled" on its standard output and never
// answers.
type fileSink struct {
	f     *os.File
	n     int
	stall int
}

func (s *fileSink) Send(ctx context.Context, key string, e event) error {
	s.n++
	if s.n == s.stall {
		if _, err := os.Stdout.WriteString("stalled\n"); err != nil { // the parent's signal
			return err
		}
		<-ctx.Done() // the parent kills the process meanwhile
		return ctx.Err()
	}
	_, err := fmt.Fprintf(s.f, "%s %d\n", key, e.Version)
	return err
}

// TestHelperRelayProcess is the child of TestKilledRelayResendsOnlyUnmarked;
// it does nothing in a normal run.
func TestHelperRelayProcess(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("helper process of TestKilledRelayResendsOnlyUnmarked")
	}
	var job childJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		t.Fatal(err)
	}
	open := sqlite.Open
	if job.Dialect == "postgres" {
		open = postgres.Open
	}
	s, err := open(t.Context(), job.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := os.OpenFile(job.Out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := outbox.New(outbox.Config[string, event]{Store: s, Entity: job.Entity, Codec: codec{}, Sink: &fileSink{f: f, stall: job.Stall},
		Batch: job.Batch, Senders: 1, SendTimeout: time.Hour, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Fatal(r.Run(t.Context())) // until killed
}

// TestKilledRelayResendsOnlyUnmarked kills (SIGKILL) a relay process in the
// middle of a round, between its sends and their mark: every event marked
// sent had been sent; a new relay sends exactly the events left unmarked,
// which re-sends only those the killed round had sent; and each key's
// versions arrive in order over both processes.
func TestKilledRelayResendsOnlyUnmarked(t *testing.T) {
	if testing.Short() {
		t.Skip("builds on a child process; skipped under -short")
	}
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		s := b.handle(t)
		entity := entityName(t)
		ks := keys(5)
		const each, batch = 12, 8
		writeAll(t, s, entity, ks, each)
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		job := childJob{Dialect: b.name, DSN: b.dsn, Entity: entity, Out: filepath.Join(t.TempDir(), "child.log"),
			Stall: batch + 2 + rng.IntN(len(ks)*each-batch-4), Batch: batch}
		if (job.Stall-1)%batch == 0 {
			job.Stall++ // not the first send of a round: the killed round has sent something
		}
		spec, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperRelayProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for the stall, then kill.
		lines := bufio.NewScanner(stdout)
		for lines.Scan() && lines.Text() != "stalled" {
		}
		if lines.Text() != "stalled" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the child never stalled: %v\n%s", lines.Err(), stderr.String())
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		child := parseLog(t, readFile(t, job.Out))

		unsent := map[delivery]bool{}
		for _, k := range ks {
			events, err := s.OutboxEvents(ctx, entity, k, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range events {
				unsent[delivery{key: k, version: ev.Version}] = true
			}
		}
		sentByChild := map[delivery]bool{}
		for _, d := range child {
			sentByChild[d] = true
		}
		for _, k := range ks {
			for v := uint64(1); v <= each; v++ {
				d := delivery{key: k, version: v}
				if !unsent[d] && !sentByChild[d] {
					t.Errorf("%s v%d is marked sent but was never sent", k, v)
				}
			}
		}
		sentUnmarked := 0
		for d := range unsent {
			if sentByChild[d] {
				sentUnmarked++
			}
		}
		if sentUnmarked == 0 || sentUnmarked >= batch {
			t.Fatalf("the killed round had sent %d unmarked events, want 1 to %d (it stalled at send %d)", sentUnmarked, batch-1, job.Stall)
		}

		log := newDeliveries()
		r := newRelay(t, s, entity, &recorder{log: log})
		stop := run(t, ctx, r)
		if err := log.waitFor(ctx, func(ds []delivery) bool { return len(ds) >= len(unsent) }); err != nil {
			t.Fatal(err)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		again := log.all()
		if len(again) != len(unsent) {
			t.Fatalf("the new relay sent %d events, want the %d left unmarked", len(again), len(unsent))
		}
		for _, d := range again {
			if !unsent[delivery{key: d.key, version: d.version}] {
				t.Errorf("the new relay sent %s v%d, which the killed one had marked sent", d.key, d.version)
			}
		}
		resent, err := checkOrder(append(child, again...), wantAll(ks, each))
		if err != nil {
			t.Fatal(err)
		}
		if resent != sentUnmarked {
			t.Fatalf("%d re-sends, want the %d the killed round sent", resent, sentUnmarked)
		}
		t.Logf("%s: killed at send %d: %d events sent and marked, %d sent and not marked (sent again), %d not sent", b.name, job.Stall,
			len(child)-sentUnmarked, sentUnmarked, len(unsent)-sentUnmarked)
	})
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

// parseLog reads the child's "key version" lines.
func parseLog(t *testing.T, text string) []delivery {
	t.Helper()
	var out []delivery
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		var d delivery
		if _, err := fmt.Sscanf(sc.Text(), "%s %d", &d.key, &d.version); err != nil {
			t.Fatalf("child's log line %q: %v", sc.Text(), err)
		}
		out = append(out, d)
	}
	return out
}
