package sqlstore_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime/sqlstore"
	"github.com/ordergen/ordergen/runtime/sqlstore/postgres"
	"github.com/ordergen/ordergen/runtime/sqlstore/sqlite"
	"github.com/ordergen/ordergen/runtime/storetest"
)

// childEnv carries a helper process's job: a JSON childJob.
const childEnv = "ORDERGEN_SQLSTORE_CHILD"

type childJob struct {
	Dialect   string
	DSN       string
	Namespace string
	Key       string
	UpTo      uint64
	Racers    int
	Out       string // file for the versions the child stored
}

// runIncrements races job.Racers goroutines on one handle and returns the
// versions each stored.
func runIncrements(t *testing.T, s *sqlstore.Store, job childJob) [][]uint64 {
	t.Helper()
	wins := make([][]uint64, job.Racers)
	errs := make([]error, job.Racers)
	var wg sync.WaitGroup
	for i := range wins {
		wg.Go(func() {
			wins[i], errs[i] = storetest.Increment(t.Context(), s.Versions(job.Namespace), job.Key, job.UpTo)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return wins
}

// TestHelperProcess is the child of TestTwoProcessesAgree; it does nothing
// in a normal run.
func TestHelperProcess(t *testing.T) {
	spec := os.Getenv(childEnv)
	if spec == "" {
		t.Skip("helper process of TestTwoProcessesAgree")
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
	data, err := json.Marshal(runIncrements(t, s, job))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(job.Out, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTwoProcessesAgree races compare-and-set on one key from this process
// and a child process (this test binary again) sharing the store: every
// version is stored by exactly one goroutine of one process.
func TestTwoProcessesAgree(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s := b.handleClosed(t)
		job := childJob{Dialect: b.name, DSN: b.dsn, Namespace: "two-processes-" + randomSuffix(t), Key: "k", UpTo: 400, Racers: 4,
			Out: filepath.Join(t.TempDir(), "child.json")}
		spec, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
		var out []byte
		done := make(chan error, 1)
		go func() {
			var err error
			out, err = cmd.CombinedOutput()
			done <- err
		}()
		mine := runIncrements(t, s, job)
		if err := <-done; err != nil {
			t.Fatalf("child process: %v\n%s", err, out)
		}
		data, err := os.ReadFile(job.Out)
		if err != nil {
			t.Fatalf("child's result: %v\n%s", err, out)
		}
		var theirs [][]uint64
		if err := json.Unmarshal(data, &theirs); err != nil {
			t.Fatal(err)
		}
		if err := storetest.CheckWins(job.UpTo, append(mine, theirs...)...); err != nil {
			t.Fatal(err)
		}
		var childWins int
		for _, w := range theirs {
			childWins += len(w)
		}
		t.Logf("%s: the child process stored %d of %d versions", b.name, childWins, job.UpTo)
	})
}
