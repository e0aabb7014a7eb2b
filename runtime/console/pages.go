package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ordergen/ordergen/runtime/inspect"
)

// page is what every page's template gets.
type page struct {
	Title    string
	Heading  string
	Refresh  int // seconds; 0: none
	ReadOnly bool
	Now      time.Time
	// Paused is set when ?refresh=0 stopped the reloads; Pause is the link
	// that does.
	Paused bool
	Pause  string
	// Notice is the action whose result the page shows (?action=ID).
	Notice *actionRecord
	// Body is the page's own data.
	Body any
}

// keyBody is the key page's data.
type keyBody struct {
	Key    keyView
	Events eventsPage
	// Confirm is the action the page asks to confirm: "discard" or
	// "park-now" ("": none).
	Confirm string
	// Acts says whether the page shows the actions on a key that runs.
	Acts bool
}

// errorBody is an error page's data.
type errorBody struct {
	Code    int
	Status  string
	Message string
}

var funcs = template.FuncMap{
	"keyURL": func(entity, subscriber, key string) string {
		return "key?" + url.Values{"entity": {entity}, "subscriber": {subscriber}, "key": {key}}.Encode()
	},
	"subscriberURL": func(entity, subscriber string) string {
		return "subscriber?" + url.Values{"entity": {entity}, "subscriber": {subscriber}}.Encode()
	},
	"outboxURL": func(transport int, entity, key string) string {
		return "outbox?" + url.Values{"transport": {strconv.Itoa(transport)}, "entity": {entity}, "key": {key}}.Encode()
	},
	"parkedURL": func(entity, subscriber string, offset int) string {
		v := url.Values{"entity": {entity}, "subscriber": {subscriber}}
		if offset > 0 {
			v.Set("offset", strconv.Itoa(offset))
		}
		return "parked?" + v.Encode()
	},
	"eventsURL": func(k keyView, after uint64) string {
		v := url.Values{"entity": {k.Entity}, "subscriber": {k.Subscriber}, "key": {k.Key}}
		if after > 0 {
			v.Set("after", strconv.FormatUint(after, 10))
		}
		return "key?" + v.Encode()
	},
	"age":    age,
	"ago":    func(t time.Time) string { return ago(time.Since(t)) },
	"stamp":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"clock":  func(t time.Time) string { return t.Format("15:04:05") },
	"num":    num,
	"pretty": pretty,
	"add":    func(a, b int) int { return a + b },
	"dict":   dict,
}

// dict makes a map of its arguments, names and values in turn, for a
// template that takes several.
func dict(pairs ...any) (map[string]any, error) {
	if len(pairs)%2 != 0 {
		return nil, fmt.Errorf("dict: %d arguments, want pairs", len(pairs))
	}
	m := make(map[string]any, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		name, ok := pairs[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: argument %d is not a name", i)
		}
		m[name] = pairs[i+1]
	}
	return m, nil
}

// age writes a duration for people: 850ms, 12.3s, 4m05s, 2h10m, 3d4h.
func age(v any) string {
	var d time.Duration
	switch v := v.(type) {
	case seconds:
		d = time.Duration(v)
	case time.Duration:
		d = v
	}
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute && d%time.Second == 0:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

func ago(d time.Duration) string {
	if d < time.Second {
		return "just now"
	}
	return age(d.Truncate(time.Second)) + " ago"
}

// num writes an integer with thin groups of three digits: 12,345.
func num(v any) string {
	s := fmt.Sprint(v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// pretty indents an event's JSON, with the characters that encoding/json
// escapes for HTML (<, >, &) written as themselves: the page escapes them.
func pretty(data json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, data, "", "  ") != nil {
		return string(data)
	}
	return unescapeHTML(b.String())
}

// unescapeHTML replaces \u003c, \u003e and \u0026 in JSON text by the
// characters they stand for; every other escape (an escaped backslash
// before a "u003c" included) is kept as it is.
func unescapeHTML(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch s[i+2 : i+6] {
			case "003c":
				b.WriteByte('<')
				i += 5
				continue
			case "003e":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteString(s[i : i+2])
		i++
	}
	return b.String()
}

// pageNames are the pages; each is parsed with the layout.
var pageNames = []string{"overview", "subscriber", "parked", "key", "outbox", "error"}

func parsePages() (map[string]*template.Template, error) {
	pages := make(map[string]*template.Template)
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/parts.html", "assets/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: parse %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, code int, name, heading string, body any) {
	p := page{Title: c.cfg.Title, Heading: heading, ReadOnly: c.readOnly(), Now: time.Now(), Body: body}
	refresh := c.cfg.Refresh
	q := r.URL.Query()
	if id, err := strconv.ParseInt(q.Get("action"), 10, 64); err == nil {
		if a, ok := c.log.byID(id); ok {
			p.Notice = &a
		}
	}
	if q.Get("refresh") == "0" {
		refresh, p.Paused = 0, true
	} else if refresh > 0 && name != "error" {
		q.Set("refresh", "0")
		q.Del("action")
		p.Pause = "?" + q.Encode()
	}
	if name == "error" || (name == "key" && body.(keyBody).Confirm != "") || name == "outbox" {
		refresh = 0 // nothing to watch, or a choice to make
	}
	if refresh > 0 {
		p.Refresh = max(1, int(refresh.Round(time.Second)/time.Second))
	}
	var b bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&b, "layout", p); err != nil {
		c.logger.Error("ordergen console: render", "page", name, "error", err)
		http.Error(w, "console: render failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// renderError writes an error page.
func (c *Console) renderError(w http.ResponseWriter, r *http.Request, code int, err error) {
	c.render(w, r, code, "error", http.StatusText(code), errorBody{Code: code, Status: http.StatusText(code), Message: err.Error()})
}

func (c *Console) overviewPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "overview", "", c.overview(r.Context()))
}

// subscriberBody is a subscriber's page's data.
type subscriberBody struct {
	Entity     string
	Subscriber subscriberView
	Requests   []requestView
	Error      string
}

func (c *Console) subscriberPage(w http.ResponseWriter, r *http.Request) {
	b, err := c.subscriber(r)
	if err != nil {
		c.renderError(w, r, readStatus(err), err)
		return
	}
	c.render(w, r, http.StatusOK, "subscriber", b.Subscriber.Name, b)
}

// subscriber gathers a subscriber's page: its card, with large charts.
func (c *Console) subscriber(r *http.Request) (subscriberBody, error) {
	q, err := parseQuery(r, "entity", "subscriber")
	if err != nil {
		return subscriberBody{}, err
	}
	in, err := c.inspector(r.Context(), q.entity)
	if err != nil {
		return subscriberBody{}, err
	}
	ev := c.entityCharts(r.Context(), in, largeChart)
	for _, s := range ev.Subscribers {
		if s.Name == q.subscriber {
			b := subscriberBody{Entity: ev.Entity, Subscriber: s, Error: ev.Error}
			for _, rq := range ev.Requests {
				if rq.Subscriber == s.Name {
					b.Requests = append(b.Requests, rq)
				}
			}
			return b, nil
		}
	}
	if ev.Error != "" {
		return subscriberBody{}, errors.New(ev.Error)
	}
	return subscriberBody{}, fmt.Errorf("%w: %s has no subscriber named %q", inspect.ErrNotFound, q.entity, q.subscriber)
}

func (c *Console) parkedPage(w http.ResponseWriter, r *http.Request) {
	p, err := c.parked(r)
	if err != nil {
		c.renderError(w, r, readStatus(err), err)
		return
	}
	c.render(w, r, http.StatusOK, "parked", p.Subscriber+" parked keys", p)
}

func (c *Console) keyPage(w http.ResponseWriter, r *http.Request) {
	q, err := parseQuery(r, "entity", "subscriber", "key")
	if err != nil {
		c.renderError(w, r, http.StatusBadRequest, err)
		return
	}
	in, err := c.inspector(r.Context(), q.entity)
	if err != nil {
		c.renderError(w, r, readStatus(err), err)
		return
	}
	k, err := c.key(r.Context(), in, q.subscriber, q.key)
	if err != nil {
		c.renderError(w, r, readStatus(err), err)
		return
	}
	evs, err := c.events(r.Context(), in, q.subscriber, q.key, q.after, pageEvents)
	if err != nil {
		c.renderError(w, r, readStatus(err), err)
		return
	}
	// A live key that runs or waits can be cancelled or parked now; a
	// store's view cannot tell, and leaves the request to the service.
	acts := !c.readOnly() && k.Operable && (!k.Live || k.Running != nil || k.Pending > 0)
	var confirm string
	switch r.URL.Query().Get("confirm") {
	case "discard":
		if !c.readOnly() && k.Parked {
			confirm = "discard"
		}
	case "park-now":
		if acts {
			confirm = "park-now"
		}
	}
	c.render(w, r, http.StatusOK, "key", q.key, keyBody{Key: k, Events: evs, Confirm: confirm, Acts: acts})
}

// outboxBody is the page of an outbox's key: what its transport says of it,
// and the buttons that act on it.
type outboxBody struct {
	Transport transportView
	Entity    string
	Key       string
	// Partition is the key as its transport shows it; nil when it flows.
	Partition *partitionView
	Confirm   bool
}

func (c *Console) outboxPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	entity, key := q.Get("entity"), q.Get("key")
	if entity == "" || !q.Has("key") || !q.Has("transport") {
		c.renderError(w, r, http.StatusBadRequest, fmt.Errorf("%w: an outbox's key needs transport, entity and key", errBadQuery))
		return
	}
	i, err := strconv.Atoi(q.Get("transport"))
	if err != nil || i < 0 || i >= len(c.cfg.Transports) {
		c.renderError(w, r, http.StatusNotFound, fmt.Errorf("%w: no transport %q", inspect.ErrNotFound, q.Get("transport")))
		return
	}
	t := c.cfg.Transports[i]
	b := outboxBody{Transport: transportOf(t.TransportStatus()), Entity: entity, Key: key, Confirm: q.Get("confirm") == "discard"}
	_, b.Transport.Actions = t.(inspect.OutboxOperator)
	b.Transport.Index, b.Transport.ReadOnly = i, c.readOnly()
	for _, p := range b.Transport.Partitions {
		if p.Entity == entity && p.Key == key {
			b.Partition = &p
			break
		}
	}
	b.Confirm = b.Confirm && b.Transport.Actions && !c.readOnly() && b.Partition != nil
	c.render(w, r, http.StatusOK, "outbox", key, b)
}

// pageEvents is how many parked events the key page shows at once.
const pageEvents = 50

// formAction carries out a mutation from a page's form, and sends the
// browser back to the page it came from, which shows the outcome.
func (c *Console) formAction(verb string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec, err := c.mutate(r, verb)
		if rf, ok := err.(*refusal); ok {
			c.renderError(w, r, rf.code, rf)
			return
		}
		back := "./?action=" + strconv.FormatInt(rec.ID, 10)
		if r.PostForm.Get("back") == "key" {
			back = funcs["keyURL"].(func(string, string, string) string)(rec.Entity, rec.Subscriber, rec.Key) +
				"&action=" + strconv.FormatInt(rec.ID, 10)
		}
		// Relative to the request's path (every form posts beside the
		// pages): http.Redirect would resolve it against the path that
		// StripPrefix left.
		w.Header().Set("Location", back)
		w.WriteHeader(http.StatusSeeOther)
	}
}
