package main

import (
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// TestFirstServiceOutsideTheRepository follows the README's quick start in
// a new module outside this repository: init, edit the schema, go
// generate, go mod tidy, a handler, a test with the generated kit, build,
// vet and test. The module uses this checkout through a replace directive
// (the stand-in for go get -tool of a published version) and the module
// proxy for the rest. It checks that the generated package's import path
// ends in its name and that go.mod and go.sum name no OpenTelemetry module:
// the service records no metrics.
func TestFirstServiceOutsideTheRepository(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	if testing.Short() {
		t.Skip("builds a service module with the go command")
	}
	_, file, _, _ := goruntime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	svc := filepath.Join(t.TempDir(), "ridesvc")
	if err := os.MkdirAll(svc, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = svc
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(svc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	run(goCmd, "mod", "init", "example.com/ridesvc")
	run(goCmd, "mod", "edit", "-replace=github.com/ordergen/ordergen="+repo,
		"-require=github.com/ordergen/ordergen@v0.0.0", "-tool=github.com/ordergen/ordergen/cmd/ordergen")
	run(goCmd, "mod", "tidy")
	run(goCmd, "tool", "ordergen", "init", "-package", "rides")
	generate, err := os.ReadFile(filepath.Join(svc, "generate.go"))
	if err != nil || !strings.Contains(string(generate), "package ridesvc\n") {
		t.Fatalf("generate.go: %v\n%s", err, generate)
	}
	write("schema.yaml", ridesSchema)
	run(goCmd, "generate", "./...")
	run(goCmd, "mod", "tidy")
	write("fares.go", faresHandler)
	write("fares_test.go", faresTest)
	run(goCmd, "build", "./...")
	run(goCmd, "vet", "./...")
	if out := run(goCmd, "test", "-count=1", "./..."); !strings.Contains(out, "ok  \texample.com/ridesvc") {
		t.Errorf("the service's test did not run:\n%s", out)
	}
	if got := strings.TrimSpace(run(goCmd, "list", "-f", "{{.ImportPath}} {{.Name}}", "./rides", "./rides/ridestest")); got != "example.com/ridesvc/rides rides\nexample.com/ridesvc/rides/ridestest ridestest" {
		t.Errorf("the generated packages' import paths do not end in their names:\n%s", got)
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(svc, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "go.opentelemetry.io") {
			t.Errorf("%s names OpenTelemetry although the service records no metrics:\n%s", name, b)
		}
	}
	// The checked-in code is what generate writes.
	run(goCmd, "tool", "ordergen", "check", "schema.yaml")
}

const ridesSchema = `version: 1
package: rides
entities:
  Order:
    key: {field: OrderID, type: string}
    version: {field: Version}
    states: [Created, Assigned, PickedUp, Completed]
    branches: {Cancelled: {from: [Created, Assigned]}}
    events:
      OrderCreated:   {fields: {Rider: string, Fare: int64}, kind: snapshot, to: Created}
      DriverAssigned: {fields: {Driver: string}, to: Assigned}
      RiderPickedUp:  {to: PickedUp}
      OrderCompleted: {fields: {Fare: int64}, to: Completed}
      OrderCancelled: {fields: {Reason: string}, to: Cancelled}
  Rider:
    key: {field: RiderID, type: string}
    conflate: true
    events:
      RiderMoved: {fields: {Lat: float64, Lng: float64}}
`

const faresHandler = `package ridesvc

import (
	"context"
	"sync"

	"example.com/ridesvc/rides"
)

// Fares keeps the fare of each order; it implements two events and
// acknowledges the rest through the generated base.
type Fares struct {
	rides.UnimplementedOrderHandler
	mu    sync.Mutex
	fares map[string]int64
}

func NewFares() *Fares { return &Fares{fares: map[string]int64{}} }

func (f *Fares) HandleOrderCreated(_ context.Context, e rides.OrderCreated) error {
	f.set(e.OrderID, e.Fare)
	return nil
}

func (f *Fares) HandleOrderCompleted(_ context.Context, e rides.OrderCompleted) error {
	f.set(e.OrderID, e.Fare)
	return nil
}

func (f *Fares) set(order string, fare int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fares[order] = fare
}

func (f *Fares) Fare(order string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fares[order]
}
`

const faresTest = `package ridesvc

import (
	"context"
	"testing"

	"example.com/ridesvc/rides"
	"example.com/ridesvc/rides/ridestest"
)

func TestFaresUnderChaos(t *testing.T) {
	ctx := context.Background()
	stream := ridestest.SequenceOrder(
		rides.OrderCreated{OrderID: "o1", Rider: "ada", Fare: 10},
		rides.DriverAssigned{OrderID: "o1", Driver: "bob"},
		rides.RiderPickedUp{OrderID: "o1"},
		rides.OrderCompleted{OrderID: "o1", Fare: 12},
	)
	got, want := NewFares(), NewFares()
	h, err := ridestest.NewOrderHarness(got)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if _, err := h.Deliver(ctx, stream, ridestest.Chaos{Seed: 3, Duplicates: 0.5, Reorder: 2}); err != nil {
		t.Fatal(err)
	}
	if err := ridestest.ApplyOrderInOrder(ctx, want, stream); err != nil {
		t.Fatal(err)
	}
	if got.Fare("o1") != 12 || want.Fare("o1") != 12 {
		t.Fatalf("fare %d, in order %d; want 12", got.Fare("o1"), want.Fare("o1"))
	}
	state, err := h.Dispatcher().State(ctx, "Order", "o1")
	if err != nil || state != rides.OrderStateCompleted {
		t.Fatalf("state %q, %v; want Completed", state, err)
	}
}
`
