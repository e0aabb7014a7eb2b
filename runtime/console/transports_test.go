package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/console"
	"github.com/ordergen/ordergen/runtime/inspect"
)

// fixedTransport is an inspect.Transport whose status is fixed.
type fixedTransport inspect.TransportStatus

func (f fixedTransport) TransportStatus() inspect.TransportStatus { return inspect.TransportStatus(f) }

// TestOutboxCardSpeaksOfKeys: an outbox's card (a store-only console shows
// one) lists the keys that do not flow, and says that none is stopped when
// every key flows, not that it holds no partitions; a broker's card still
// speaks of partitions.
func TestOutboxCardSpeaksOfKeys(t *testing.T) {
	flowing := fixedTransport{Kind: "outbox", Name: "transactional outbox", Counters: []inspect.Counter{{Name: "Account unsent", Value: 0}}}
	stopped := fixedTransport{Kind: "outbox", Name: "outbox of Order", Partitions: []inspect.Partition{{Name: "Order o-1", Unfinished: 2, Parked: 2, Paused: "parked", Detail: "broker down"}}}
	idle := fixedTransport{Kind: "kafka", Name: "group ledger"}
	in := newService(t, runtime.Config[string, deposit]{}).inspector()
	for name, tc := range map[string]struct {
		tr         fixedTransport
		want, lack []string
	}{
		"flowing outbox": {tr: flowing, want: []string{"No key stopped: none parked or retrying."}, lack: []string{"No partitions held now.", "<th>partition</th>"}},
		"stopped outbox": {tr: stopped, want: []string{"<th>key</th>", "Order o-1", "broker down"}, lack: []string{"No partitions held now.", "<th>partition</th>"}},
		"idle broker":    {tr: idle, want: []string{"No partitions held now."}, lack: []string{"No key stopped"}},
	} {
		site := newSite(t, console.Config{Inspectors: []inspect.Inspector{in}, Transports: []inspect.Transport{tc.tr}})
		code, body := site.page(t, "")
		if code != http.StatusOK {
			t.Fatalf("%s: status %d", name, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the overview lacks %q", name, w)
			}
		}
		for _, l := range tc.lack {
			if strings.Contains(body, l) {
				t.Errorf("%s: the overview says %q", name, l)
			}
		}
	}
}
