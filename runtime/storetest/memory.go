package storetest

import (
	"sync"

	"github.com/ordergen/ordergen/runtime"
	"github.com/ordergen/ordergen/runtime/durable"
)

// Memory returns a durable.Store made of the runtime's in-memory
// stores, one set per namespace: the reference the durable stores are
// measured against. Every caller of its methods shares its data.
func Memory() durable.Store {
	return &memory{
		versions: map[string]*runtime.MemoryVersionStore[string]{},
		states:   map[string]*runtime.MemoryStateStore[string]{},
		parks:    map[string]*runtime.MemoryParkStore[string, durable.RawEvent]{},
	}
}

type memory struct {
	mu       sync.Mutex
	versions map[string]*runtime.MemoryVersionStore[string]
	states   map[string]*runtime.MemoryStateStore[string]
	parks    map[string]*runtime.MemoryParkStore[string, durable.RawEvent]
}

func (m *memory) Versions(ns string) runtime.VersionStore[string] {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.versions[ns]
	if s == nil {
		s = runtime.NewMemoryVersionStore[string]()
		m.versions[ns] = s
	}
	return s
}

func (m *memory) States(ns string) runtime.StateStore[string] {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.states[ns]
	if s == nil {
		s = runtime.NewMemoryStateStore[string]()
		m.states[ns] = s
	}
	return s
}

func (m *memory) Parks(ns string) runtime.ParkStore[string, durable.RawEvent] {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.parks[ns]
	if s == nil {
		s = runtime.NewMemoryParkStore[string, durable.RawEvent]()
		m.parks[ns] = s
	}
	return s
}
