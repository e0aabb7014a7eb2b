package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/inspect"
)

// deposit is the event of the fixture's accounts.
type deposit struct {
	Seq    int    `json:"seq"`
	Amount int64  `json:"amount"`
	Note   string `json:"note,omitempty"`
}

// service is an engine whose handler fails, permanently, for the keys in
// broken; it records what it handled, in order per key.
type service struct {
	engine *runtime.Engine[string, deposit]
	mu     sync.Mutex
	broken map[string]bool
	seen   map[string][]int
}

func newService(t *testing.T, cfg runtime.Config[string, deposit]) *service {
	t.Helper()
	s := &service{broken: map[string]bool{}, seen: map[string][]int{}}
	cfg.Name = "Account"
	cfg.Logger = quiet()
	if cfg.Retry.Attempts == 0 {
		cfg.Retry = runtime.Retry{Attempts: 1}
	}
	e, err := runtime.New(func(_ context.Context, key string, d deposit) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.broken[key] {
			return runtime.Permanent(errors.New("ledger database is read-only"))
		}
		s.seen[key] = append(s.seen[key], d.Seq)
		return nil
	}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.engine = e
	t.Cleanup(func() { e.Close(context.Background()) })
	return s
}

// park submits n events for key, with the handler failing, so that the key
// parks with all of them.
func (s *service) park(t *testing.T, key string, n int) {
	t.Helper()
	s.setBroken(key, true)
	for i := 1; i <= n; i++ {
		if err := s.engine.Submit(t.Context(), key, deposit{Seq: i, Amount: int64(10 * i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.engine.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func (s *service) setBroken(key string, broken bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.broken[key] = broken
}

func (s *service) handled(key string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.seen[key]...)
}

func (s *service) inspector() inspect.Inspector {
	return inspect.Engines[string, deposit]{Name: "Account", Engines: func() []*runtime.Engine[string, deposit] {
		return []*runtime.Engine[string, deposit]{s.engine}
	}}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// logBuffer is a concurrency-safe log destination.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// site is a console mounted under /ops/ on a test server.
type site struct {
	srv *httptest.Server
	log *logBuffer
	c   *console.Console
}

func newSite(t *testing.T, cfg console.Config) *site {
	t.Helper()
	return newSampledSite(t, cfg, nil)
}

// newSampledSite is newSite with sampled called after each round of
// samples.
func newSampledSite(t *testing.T, cfg console.Config, sampled func()) *site {
	t.Helper()
	logs := &logBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	c, err := console.NewSampled(cfg, sampled)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	mux := http.NewServeMux()
	mux.Handle("/ops/", http.StripPrefix("/ops", c))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &site{srv: srv, log: logs, c: c}
}

// allowAll is an authorizer that lets "alice" do anything.
func allowAll(*http.Request, console.Action) (string, error) { return "alice", nil }

// get fetches path under /ops/ and decodes the JSON answer into v.
func (s *site) get(t *testing.T, path string, v any) int {
	t.Helper()
	res, err := http.Get(s.srv.URL + "/ops/" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %d %v\n%s", path, res.StatusCode, err, body)
		}
	}
	return res.StatusCode
}

// page fetches an HTML page under /ops/.
func (s *site) page(t *testing.T, path string) (int, string) {
	t.Helper()
	res, err := http.Get(s.srv.URL + "/ops/" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// post sends a form to path under /ops/, with extra headers, and returns
// the status and the body. Redirects are not followed.
func (s *site) post(t *testing.T, path string, form url.Values, header http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.srv.URL+"/ops/"+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, vs := range header {
		req.Header[k] = vs
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(body)
}

func keyForm(key string) url.Values {
	return url.Values{"entity": {"Account"}, "subscriber": {"Account"}, "key": {key}}
}

// posting is a POST a test expects an answer to: its status, and words of
// its body.
type posting struct {
	name   string
	site   *site
	path   string
	form   url.Values
	header http.Header
	code   int
	says   string
}

// expectAnswers makes each post and checks its answer.
func expectAnswers(t *testing.T, posts []posting) {
	t.Helper()
	for _, p := range posts {
		code, _, body := p.site.post(t, p.path, p.form, p.header)
		if code != p.code || !strings.Contains(body, p.says) {
			t.Errorf("%s: %d %s, want %d saying %q", p.name, code, body, p.code, p.says)
		}
	}
}
