package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// goEnv returns the environment of the go command for a user's module
// outside this repository: no workspace, and GOFLAGS without -mod (a user
// runs the documentation's commands as they are).
func goEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the documentation's blocks with:", err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOFLAGS=") && !strings.HasPrefix(kv, "GOWORK=") {
			env = append(env, kv)
		}
	}
	var flags []string
	for _, f := range strings.Fields(os.Getenv("GOFLAGS")) {
		if !strings.HasPrefix(f, "-mod=") {
			flags = append(flags, f)
		}
	}
	// -trimpath leaves the folder of a package out of its build's cache
	// key: the checkout appears in each test's new temporary folder, and
	// without it every run compiled all of ordergen again (most of the
	// quick start's minute). Nothing the tests check depends on it.
	flags = append(flags, "-trimpath")
	env = append(env, "GOWORK=off")
	for _, kv := range extra {
		if v, ok := strings.CutPrefix(kv, "GOFLAGS="); ok {
			flags = append(flags, v)
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOFLAGS="+strings.Join(flags, " "))
}

// TestFirstServiceOutsideTheRepository follows the quick start (the blocks
// of flow quickstart, as written: the README's set-up, docs/quickstart.md
// and the operator's tool of docs/operating.md) in a new module outside
// this repository, which takes ordergen from this checkout through the
// README's replace line (the checkout appears as ../ordergen, as the README
// has it):
// init, the schema, go generate, go mod tidy, a handler, its test with the
// generated kit over 20 seeds, go test, ordergen check, and the operator's
// tool added from the service's module. Then it checks what a new user
// meets after: import paths that end in the packages' names, no
// OpenTelemetry in go.mod and go.sum (the service records no metrics), a
// subscriber named by a string variable failing to compile and a misspelt
// literal failing with the name meant, and ordergen-parked refusing a
// store path that does not exist.
func TestFirstServiceOutsideTheRepository(t *testing.T) {
	env := goEnv(t)
	if testing.Short() {
		t.Skip("builds a service module with the go command")
	}
	// It runs the go command most of its time, as the other tests that
	// build a module do: they overlap their waits.
	t.Parallel()
	top := checkoutDir(t, "ordergen-quickstart")
	if err := os.Symlink(repoRoot(t), filepath.Join(top, "ordergen")); err != nil {
		t.Fatal(err)
	}
	r := &flowRunner{t: t, dir: top, env: env}
	var outputs []string
	for _, s := range docFlow(t, "quickstart") {
		outputs = append(outputs, r.step(s))
	}
	if filepath.Base(r.dir) != "ridesvc" {
		t.Fatalf("the quick start ended in %s, not in the service's folder", r.dir)
	}
	all := strings.Join(outputs, "")
	for _, want := range []string{
		"wrote schema.yaml and generate.go: edit the schema, then run go generate ./...\n",
		"ok  \texample.com/ridesvc",
		"usage: ordergen-parked [-store DSN] [-create] COMMAND\n",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the quick start's output lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "ordergen: note:") {
		t.Errorf("init found something missing in the quick start's set-up:\n%s", all)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "bin", "ordergen-parked")); err != nil {
		t.Errorf("no bin/ordergen-parked: %v", err)
	}
	if got := strings.TrimSpace(r.run("go", "list", "-f", "{{.ImportPath}} {{.Name}}", "./rides", "./rides/ridestest")); got != "example.com/ridesvc/rides rides\nexample.com/ridesvc/rides/ridestest ridestest" {
		t.Errorf("the generated packages' import paths do not end in their names:\n%s", got)
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(r.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "go.opentelemetry.io") {
			t.Errorf("%s names OpenTelemetry although the service records no metrics:\n%s", name, b)
		}
	}
	// Nor does its build: the runtime traces through its own interface
	// (runtime.Tracer), which only runtime/oteltrace implements with
	// OpenTelemetry.
	if deps := r.run("go", "list", "-deps", "./..."); strings.Contains(deps, "go.opentelemetry.io") {
		t.Errorf("the service's packages import OpenTelemetry although it neither traces nor records metrics:\n%s", deps)
	}
	// The schema's doc: is in the generated comments, the package has its
	// comment.
	events, err := os.ReadFile(filepath.Join(r.dir, "rides", "events.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n// Package rides is generated by ordergen", "\t// The quoted fare in cents.\n\tFare int64\n", "A rider's order of one ride, from request to completion."} {
		if !strings.Contains(string(events), want) {
			t.Errorf("rides/events.go lacks %q", want)
		}
	}

	// Subscribers are named by the generated type: a string variable does
	// not compile, and a misspelt literal (which converts) names the one
	// meant.
	misuse := filepath.Join(r.dir, "misuse.go")
	if err := os.WriteFile(misuse, []byte(subscriberByString), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := r.try("go", "build", "./...")
	if err == nil || !strings.Contains(out, "cannot use name (variable of type string) as rides.OrderSubscriberName value in argument to d.State") {
		t.Errorf("a subscriber named by a string variable: %v\n%s", err, out)
	}
	if err := os.Remove(misuse); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.dir, "subscriber_test.go"), []byte(misspeltSubscriberTest), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := r.run("go", "test", "-count=1", "-run", "TestMisspeltSubscriber", "-v", "."); !strings.Contains(out, "--- PASS: TestMisspeltSubscriber") {
		t.Errorf("the misspelt subscriber's test did not pass:\n%s", out)
	}

	// The operator's tool refuses a store that is not there.
	out, err = r.try("go", "tool", "ordergen-parked", "-store", "ordergen.db", "list")
	if err == nil || !strings.Contains(out, "ordergen-parked: no SQLite store at ordergen.db: the file does not exist") {
		t.Errorf("ordergen-parked on a missing store: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "ordergen.db")); !os.IsNotExist(err) {
		t.Errorf("ordergen-parked created the store: %v", err)
	}
}

// subscriberByString names a subscriber by a string variable: it must not
// compile.
const subscriberByString = `package ridesvc

import (
	"context"

	"example.com/ridesvc/rides"
)

func stateOf(ctx context.Context, d *rides.OrderDispatcher, name string) (rides.OrderState, error) {
	return d.State(ctx, name, "o1")
}
`

// misspeltSubscriberTest names a subscriber by a misspelt literal, which
// converts to the type: the error names the subscriber meant.
const misspeltSubscriberTest = `package ridesvc

import (
	"context"
	"testing"

	"example.com/ridesvc/rides"
)

func TestMisspeltSubscriber(t *testing.T) {
	ctx := context.Background()
	d, err := rides.NewOrderDispatcher(NewFares())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(ctx)
	_, err = d.State(ctx, "order", "o1")
	if err == nil || err.Error() != ` + "`" + `rides: no subscriber named "order" (did you mean Order?)` + "`" + ` {
		t.Fatalf("State of a misspelt subscriber: %v", err)
	}
	if _, err := d.State(ctx, rides.OrderFirstSubscriber, "o1"); err != nil {
		t.Fatal(err)
	}
}
`

// TestPublishedModuleOutsideTheRepository runs the documentation's go get
// -tool lines (the blocks of flow published, as written: docs/quickstart.md
// and docs/operating.md) against a module proxy
// in a folder that serves this checkout as a published version, as the
// module proxy will once ordergen is published: go get -tool of ordergen,
// init, and go get -tool of ordergen-parked. The version is this
// checkout's (see publishedVersion), removed from the module cache before
// and after the run.
func TestPublishedModuleOutsideTheRepository(t *testing.T) {
	env := goEnv(t)
	if testing.Short() {
		t.Skip("builds a service module with the go command")
	}
	// It runs the go command most of its time, as the other tests that
	// build a module do: they overlap their waits.
	t.Parallel()
	top := t.TempDir()
	version := publishedVersion(t)
	if release, ok := lockFile(filepath.Join(os.TempDir(), "ordergen-published-"+strings.TrimPrefix(version, "v0.0.")+".lock")); ok {
		t.Cleanup(release)
	} else {
		// Another run of this checkout serves its version now: a version
		// of this run's own, which no cache knows.
		version = fmt.Sprintf("v0.0.%d", time.Now().UnixNano())
		t.Logf("another run holds this checkout's version: publishing %s", version)
	}
	proxy := filepath.Join(top, "proxy")
	publish(t, proxy, version)
	probe := &flowRunner{t: t, dir: top, env: env}
	goproxy := strings.TrimSpace(probe.run("go", "env", "GOPROXY"))
	modcache := strings.TrimSpace(probe.run("go", "env", "GOMODCACHE"))
	unpublish(t, modcache, version) // what a run that did not end left
	t.Cleanup(func() { unpublish(t, modcache, version) })
	r := &flowRunner{t: t, dir: top, env: goEnv(t,
		"GOPROXY=file://"+filepath.ToSlash(proxy)+","+goproxy,
		"GONOSUMDB=github.com/ordergen/ordergen",
		"GOFLAGS=-modcacherw", // so that the version can be removed after
	)}
	var outputs []string
	for _, s := range docFlow(t, "published") {
		outputs = append(outputs, r.step(s))
	}
	all := strings.Join(outputs, "")
	for _, want := range []string{
		"go: added github.com/ordergen/ordergen " + version + "\n",
		"wrote schema.yaml and generate.go: edit the schema, then run go generate ./...\n",
		"usage: ordergen-parked [-store DSN] [-create] COMMAND\n",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the published set-up's output lacks %q:\n%s", want, all)
		}
	}
	mod, err := os.ReadFile(filepath.Join(r.dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tool (\n\tgithub.com/ordergen/ordergen/cmd/ordergen\n\tgithub.com/ordergen/ordergen/cmd/ordergen-parked\n)", "github.com/ordergen/ordergen " + version} {
		if !strings.Contains(string(mod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, mod)
		}
	}
	// The starter schema generates with the tool go get pinned.
	if out := r.run("go", "generate", "./..."); out != "" {
		t.Errorf("go generate said:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "rides", "events.go")); err != nil {
		t.Errorf("go generate wrote no rides/events.go: %v", err)
	}
}

// checkoutDir returns an empty folder of the temporary folder, named for
// this checkout with prefix, that t holds until it ends (and removes then):
// go tool, which builds the quick start's tools, keeps their folder in the
// build cache's key, so that in a new folder each run it compiled all of
// ordergen again. When another run of this checkout holds it, it returns a
// new temporary folder.
func checkoutDir(t *testing.T, prefix string) string {
	t.Helper()
	h := sha256.Sum256([]byte(repoRoot(t)))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("%s-%x", prefix, h[:6]))
	release, ok := lockFile(dir + ".lock")
	if !ok {
		t.Logf("another run holds %s: building in a new folder", dir)
		return t.TempDir()
	}
	t.Cleanup(release) // after the removal below: cleanups run last first
	clear := func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	}
	clear() // what a run that did not end left
	t.Cleanup(clear)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// publishedVersion returns the version that the published test serves this
// checkout as: a number from its files and its path. Unchanged files give
// the version of the last run, whose packages the build cache still holds
// (go tool, which builds the tools, keeps the module's folder in the build
// cache's key, so a new version each run compiled all of ordergen again).
// Changed files give a new version: the go command takes a version's
// contents to be immutable (its module index remembers a version's file
// lists), so serving other files under a version it saw before fails with
// files that are no longer there. The test holds a lock on the version
// while it runs (lockFile), and clears what the module cache holds of it
// before and after.
func publishedVersion(t *testing.T) string {
	t.Helper()
	var zip bytes.Buffer
	if err := modzip.CreateFromDir(&zip, module.Version{Path: "github.com/ordergen/ordergen", Version: "v0.0.0"}, repoRoot(t)); err != nil {
		t.Fatalf("zip this checkout: %v", err)
	}
	h := sha256.New()
	h.Write([]byte(repoRoot(t) + "\x00"))
	h.Write(zip.Bytes())
	return fmt.Sprintf("v0.0.%d", binary.BigEndian.Uint64(h.Sum(nil))>>1)
}

// publish lays out, in dir, a module proxy (GOPROXY=file://dir) that
// serves this checkout as github.com/ordergen/ordergen at version.
func publish(t *testing.T, dir, version string) {
	t.Helper()
	const path = "github.com/ordergen/ordergen"
	at := filepath.Join(dir, filepath.FromSlash(path), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	zip, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := modzip.CreateFromDir(zip, module.Version{Path: path, Version: version}, repoRoot(t)); err != nil {
		zip.Close()
		t.Fatalf("zip this checkout as %s@%s: %v", path, version, err)
	}
	if err := zip.Close(); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Now().UTC().Format(time.RFC3339))
	for name, data := range map[string]string{version + ".mod": string(mod), version + ".info": info, "list": version + "\n"} {
		if err := os.WriteFile(filepath.Join(at, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// unpublish removes version of ordergen from the module cache modcache,
// where the published test put it: its files, its line in the download
// cache's list of versions, and the folders left empty.
func unpublish(t *testing.T, modcache, version string) {
	const path = "github.com/ordergen/ordergen"
	download := filepath.Join(modcache, "cache", "download", filepath.FromSlash(path), "@v")
	paths := []string{filepath.Join(modcache, filepath.FromSlash(path)+"@"+version)}
	files, _ := filepath.Glob(filepath.Join(download, version+".*"))
	for _, p := range append(paths, files...) {
		if err := os.RemoveAll(p); err != nil {
			t.Errorf("remove %s from the module cache: %v", p, err)
		}
	}
	list := filepath.Join(download, "list")
	if data, err := os.ReadFile(list); err == nil {
		var keep []string
		for _, v := range strings.Fields(string(data)) {
			if v != version {
				keep = append(keep, v)
			}
		}
		if len(keep) == 0 {
			err = os.Remove(list)
		} else {
			err = os.WriteFile(list, []byte(strings.Join(keep, "\n")+"\n"), 0o644)
		}
		if err != nil {
			t.Errorf("remove %s from %s: %v", version, list, err)
		}
	}
	// The folders that only this version filled (os.Remove leaves a
	// folder that holds anything).
	for _, dir := range []string{download, filepath.Dir(download), filepath.Dir(filepath.Dir(download)),
		filepath.Join(modcache, filepath.FromSlash(filepath.Dir(path)))} {
		_ = os.Remove(dir)
	}
}
