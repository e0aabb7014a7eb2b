package peers

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/pubsub/gochannel"
)

// keyMeta is the metadata entry that carries an event's key.
const keyMeta = "key"

// watermillPeer is Watermill's in-process GoChannel with a Router set up to
// keep per-key order: publishing blocks until the subscriber acknowledges,
// and each of N shard topics (crc32(key) % N) has one handler.
type watermillPeer struct {
	pubsub    *gochannel.GoChannel
	router    *message.Router
	topics    []string
	shard     striper
	submitted atomic.Uint64
	handled   atomic.Uint64
	runErr    chan error
}

// NewWatermill returns a started Watermill router with workers shard
// topics over one GoChannel.
func NewWatermill(h Handler, workers int) (Peer, error) {
	logger := watermill.NopLogger{}
	ps := gochannel.NewGoChannel(gochannel.Config{BlockPublishUntilSubscriberAck: true}, logger)
	router, err := message.NewRouter(message.RouterConfig{}, logger)
	if err != nil {
		return nil, fmt.Errorf("watermill: new router: %w", err)
	}
	p := &watermillPeer{pubsub: ps, router: router, topics: make([]string, workers), shard: newStriper(workers), runErr: make(chan error, 1)}
	handle := func(msg *message.Message) error {
		ev, err := decodeEvent(msg.Payload)
		if err != nil {
			return err
		}
		h(msg.Metadata.Get(keyMeta), ev)
		p.handled.Add(1)
		return nil
	}
	for i := range p.topics {
		p.topics[i] = "shard-" + strconv.Itoa(i)
		router.AddConsumerHandler("handler-"+strconv.Itoa(i), p.topics[i], ps, handle)
	}
	go func() { p.runErr <- router.Run(context.Background()) }()
	select {
	case <-router.Running():
		return p, nil
	case err := <-p.runErr:
		return nil, fmt.Errorf("watermill: run router: %w", err)
	}
}

// encodeEvent returns ev as a message payload.
func encodeEvent(ev Event) []byte {
	b := make([]byte, 12)
	binary.LittleEndian.PutUint32(b[0:], ev.Key)
	binary.LittleEndian.PutUint32(b[4:], ev.Seq)
	binary.LittleEndian.PutUint32(b[8:], ev.Index)
	return b
}

// decodeEvent reads an event from a payload made by encodeEvent.
func decodeEvent(b []byte) (Event, error) {
	if len(b) != 12 {
		return Event{}, fmt.Errorf("watermill: payload of %d bytes, want 12", len(b))
	}
	return Event{
		Key:   binary.LittleEndian.Uint32(b[0:]),
		Seq:   binary.LittleEndian.Uint32(b[4:]),
		Index: binary.LittleEndian.Uint32(b[8:]),
	}, nil
}

// Submit publishes ev to its key's shard topic and returns once the handler
// acknowledged it. The message id is the event's index: cheaper than a
// UUID, and unique within a run.
func (p *watermillPeer) Submit(_ context.Context, key string, ev Event) error {
	msg := message.NewMessage(strconv.FormatUint(uint64(ev.Index), 10), encodeEvent(ev))
	msg.Metadata.Set(keyMeta, key)
	if err := p.pubsub.Publish(p.topics[p.shard.of(key)], msg); err != nil {
		return fmt.Errorf("watermill: publish: %w", err)
	}
	p.submitted.Add(1)
	return nil
}

// Drain checks that every published event was handled: a publish returns
// only after its handler acknowledged the message.
func (p *watermillPeer) Drain(context.Context) error {
	if n, sent := p.handled.Load(), p.submitted.Load(); n != sent {
		return fmt.Errorf("watermill: %d events handled of %d published", n, sent)
	}
	return nil
}

// Close stops the router and the GoChannel.
func (p *watermillPeer) Close(context.Context) error {
	err := p.router.Close()
	if runErr := <-p.runErr; runErr != nil {
		err = errors.Join(err, runErr)
	}
	if cerr := p.pubsub.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return fmt.Errorf("watermill: close: %w", err)
	}
	return nil
}
