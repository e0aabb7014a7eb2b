package console

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ordergen/ordergen/runtime/inspect"
)

// Config configures a Console.
type Config struct {
	// Inspectors are the entities the console shows, in this order: the
	// Inspector methods of a service's generated dispatchers, or
	// inspect.Engines of its own topics and engines.
	Inspectors []inspect.Inspector
	// Catalog, when set, is asked for the entities on every request instead
	// of Inspectors: for a view whose entities come and go (a durable
	// store's, in ordergen-parked serve).
	Catalog func(ctx context.Context) ([]inspect.Inspector, error)
	// Transports are shown with their state (runtime/kafka's Consumer: lag
	// and paused partitions).
	Transports []inspect.Transport
	// Authorize, when set, decides who may act: replay and discard parked
	// keys, cancel a key's running attempt and park a key now (of an
	// inspect.KeyOperator: the generated Inspector), retry and discard the
	// outbox's keys (of a transport that is an inspect.OutboxOperator).
	// Nil: the console is read-only, shows no buttons, and refuses every
	// mutation.
	Authorize Authorizer
	// CrossOrigin refuses cross-origin mutations. Nil:
	// http.NewCrossOriginProtection(), which refuses every cross-origin
	// browser request; add trusted origins to one of your own.
	CrossOrigin *http.CrossOriginProtection
	// Logger receives every mutation, with who asked for what and how it
	// went, and every refusal. Nil: slog.Default().
	Logger *slog.Logger
	// Title heads every page. Empty: "ordergen".
	Title string
	// Top is how many keys with the largest backlog are shown per
	// subscriber. Zero: 10.
	Top int
	// StuckAfter is the age of a key's oldest pending event past which it
	// is shown as stuck (what Health reports). Zero: 30 seconds.
	StuckAfter time.Duration
	// Refresh is how often the pages reload themselves. Zero: 5 seconds;
	// negative: never.
	Refresh time.Duration
	// ActionTimeout bounds how long a replay or a discard is waited for
	// before the answer says that it goes on. Zero: 10 seconds.
	ActionTimeout time.Duration
	// Sample is how often the console samples each subscriber for its
	// last-hour charts (see Console.Sample). Zero: 5 seconds; negative:
	// never on its own (no charts, unless the service calls Sample).
	Sample time.Duration
}

// Authorizer decides whether the request r may carry out the mutation a.
// It returns who asked, as the log should name them (a user name from the
// service's authentication), or an error that refuses the mutation; the
// error's text is shown to the one refused. Authentication of the reading
// pages is the service's: wrap the Console in its middleware.
type Authorizer func(r *http.Request, a Action) (who string, err error)

// Action is a mutation an operator asks for.
type Action struct {
	// Verb is "replay" or "discard" (a subscriber's parked key),
	// "cancel-attempt" or "park-now" (a subscriber's key that runs or waits:
	// runtime.Engine.CancelAttempt and ParkNow), or "outbox-retry" or
	// "outbox-discard" (a key of a transport's outbox).
	Verb string
	// Entity, Subscriber and Key say what it acts on; Key is its text.
	// An outbox's action has no Subscriber.
	Entity, Subscriber, Key string
	// Transport names the transport of an outbox's action (its
	// TransportStatus name); empty otherwise.
	Transport string
}

// ErrReadOnly is the refusal of a mutation by a console without an
// Authorizer.
var ErrReadOnly = errors.New("console: read-only: the service gave this console no authorizer")

// The defaults of Config.
const (
	defaultTop           = 10
	defaultStuckAfter    = 30 * time.Second
	defaultRefresh       = 5 * time.Second
	defaultActionTimeout = 10 * time.Second
	defaultSample        = 5 * time.Second
)

// Console is the operator's web console: an http.Handler for a service to
// mount under a path prefix of its choice, with http.StripPrefix:
//
//	mux.Handle("/ops/", http.StripPrefix("/ops", c))
//
// Its pages and its JSON API (see the package documentation) use only
// links relative to that prefix.
type Console struct {
	cfg     Config
	mux     *http.ServeMux
	pages   map[string]*template.Template
	log     *actionLog
	logger  *slog.Logger
	history *history
	// stop ends the sampler, which closes stopped when it returns (both nil
	// without a sampler); closeOnce makes Close idempotent.
	stop      context.CancelFunc
	stopped   chan struct{}
	closeOnce sync.Once
	// sampled, when set (tests), is called after each round of samples.
	sampled func()
}

//go:embed assets
var assets embed.FS

// New returns a console for cfg, and starts its sampler (see Sample and
// Close). It fails on a configuration without entities.
func New(cfg Config) (*Console, error) { return newConsole(cfg, nil) }

// newConsole is New, with a function called after each round of samples
// (tests).
func newConsole(cfg Config, sampled func()) (*Console, error) {
	if len(cfg.Inspectors) == 0 && cfg.Catalog == nil {
		return nil, errors.New("console: no Inspectors and no Catalog: nothing to show")
	}
	for i, in := range cfg.Inspectors {
		if in == nil {
			return nil, fmt.Errorf("console: Inspectors[%d] is nil", i)
		}
	}
	cfg.Title = cmp.Or(cfg.Title, "ordergen")
	cfg.Top = cmp.Or(cfg.Top, defaultTop)
	cfg.StuckAfter = cmp.Or(cfg.StuckAfter, defaultStuckAfter)
	cfg.Refresh = cmp.Or(cfg.Refresh, defaultRefresh)
	cfg.ActionTimeout = cmp.Or(cfg.ActionTimeout, defaultActionTimeout)
	cfg.Sample = cmp.Or(cfg.Sample, defaultSample)
	if cfg.CrossOrigin == nil {
		cfg.CrossOrigin = http.NewCrossOriginProtection()
	}
	c := &Console{cfg: cfg, log: newActionLog(100), logger: cmp.Or(cfg.Logger, slog.Default()), sampled: sampled}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	c.pages = pages
	c.routes()
	// Samples a service takes itself (Sample) are kept at the default's
	// interval: the charts join points that far apart.
	c.history = newHistory(cmp.Or(max(cfg.Sample, 0), defaultSample))
	if cfg.Sample > 0 {
		var ctx context.Context
		ctx, c.stop = context.WithCancel(context.Background())
		c.stopped = make(chan struct{})
		go c.sampleLoop(ctx, cfg.Sample)
	}
	return c, nil
}

func (c *Console) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", c.overviewPage)
	m.HandleFunc("GET /subscriber", c.subscriberPage)
	m.HandleFunc("GET /parked", c.parkedPage)
	m.HandleFunc("GET /key", c.keyPage)
	m.HandleFunc("GET /outbox", c.outboxPage)
	m.HandleFunc("POST /replay", c.formAction(verbReplay))
	m.HandleFunc("POST /discard", c.formAction(verbDiscard))
	m.HandleFunc("POST /cancel-attempt", c.formAction(verbCancelAttempt))
	m.HandleFunc("POST /park-now", c.formAction(verbParkNow))
	m.HandleFunc("POST /outbox-retry", c.formAction(verbOutboxRetry))
	m.HandleFunc("POST /outbox-discard", c.formAction(verbOutboxDiscard))
	m.HandleFunc("GET /api/overview", c.apiOverview)
	m.HandleFunc("GET /api/parked", c.apiParked)
	m.HandleFunc("GET /api/events", c.apiEvents)
	m.HandleFunc("GET /api/key", c.apiKey)
	m.HandleFunc("GET /api/actions", c.apiActions)
	m.HandleFunc("GET /api/history", c.apiHistory)
	m.HandleFunc("POST /api/replay", c.apiAction(verbReplay))
	m.HandleFunc("POST /api/discard", c.apiAction(verbDiscard))
	m.HandleFunc("POST /api/cancel-attempt", c.apiAction(verbCancelAttempt))
	m.HandleFunc("POST /api/park-now", c.apiAction(verbParkNow))
	m.HandleFunc("POST /api/outbox/retry", c.apiAction(verbOutboxRetry))
	m.HandleFunc("POST /api/outbox/discard", c.apiAction(verbOutboxDiscard))
	m.HandleFunc("GET /style.css", c.asset("assets/style.css", "text/css; charset=utf-8"))
	m.HandleFunc("GET /favicon.svg", c.asset("assets/favicon.svg", "image/svg+xml"))
	c.mux = m
}

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if r.URL.Path == "" {
		// Mounted at /ops and asked for /ops: the pages' relative links need
		// the trailing slash. The Location is relative to the request's own
		// path, which StripPrefix emptied.
		original := r.URL.EscapedPath()
		if r.RequestURI != "" {
			original, _, _ = strings.Cut(r.RequestURI, "?")
		}
		h.Set("Location", original[strings.LastIndex(original, "/")+1:]+"/")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	c.mux.ServeHTTP(w, r)
}

func (c *Console) asset(name, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := assets.ReadFile(name)
		if err != nil {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write(data)
	}
}

// inspectors returns the entities to show.
func (c *Console) inspectors(ctx context.Context) ([]inspect.Inspector, error) {
	if c.cfg.Catalog != nil {
		return c.cfg.Catalog(ctx)
	}
	return c.cfg.Inspectors, nil
}

// inspector returns the entity named name.
func (c *Console) inspector(ctx context.Context, name string) (inspect.Inspector, error) {
	all, err := c.inspectors(ctx)
	if err != nil {
		return nil, err
	}
	for _, in := range all {
		if in.Entity() == name {
			return in, nil
		}
	}
	return nil, fmt.Errorf("%w: no entity named %q", inspect.ErrNotFound, name)
}

// readOnly reports whether the console refuses every mutation.
func (c *Console) readOnly() bool { return c.cfg.Authorize == nil }
