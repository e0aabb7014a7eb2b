// Package console is for the people who operate a service built on
// ordergen, and for the service that mounts it: a web console (an
// http.Handler) that shows, per entity and subscriber, the counters and
// their last hour as charts, the keys with the largest backlog and the age
// of their oldest event, the stuck keys, the parked keys with why and how
// often they were tried and their parked events, and the transports' state
// (Kafka lag and paused partitions); and that replays and discards parked
// keys, cancels the running attempt of a stuck key or parks it now with its
// backlog, and retries and discards the transactional outbox's keys. The same handler
// serves a JSON API, which the pages' data comes from and scripts can call.
//
// Mount it under any path prefix, over the Inspector methods of the
// service's generated dispatchers:
//
//	c, err := console.New(console.Config{
//		Inspectors: []inspect.Inspector{accounts.Inspector(), orders.Inspector()},
//		Transports: []inspect.Transport{consumer},         // optional
//		Authorize:  func(r *http.Request, a console.Action) (string, error) {
//			user, ok := myauth.User(r)                         // the service's own
//			if !ok || !user.OnCall {
//				return "", errors.New("only the person on call may " + a.Verb)
//			}
//			return user.Name, nil
//		},
//	})
//	defer c.Close() // stops the sampling of the last-hour charts
//	mux.Handle("/ops/", http.StripPrefix("/ops", myauth.Require(c)))
//
// ordergen-parked serve runs the same console over a durable store alone,
// where its actions on a subscriber's key leave requests for the running
// service.
//
// # Security
//
// The console shows keys and event payloads: mount it behind the service's
// authentication. It is read-only unless the service passes an Authorizer,
// which decides each mutation and names who asked: a replay or discard of
// a parked key; a cancel of a key's running attempt (its context ends with
// a cause naming who asked, runtime.ErrOperatorCancel; the retry policy,
// then the park, follow) or its park now with its backlog (a handler that
// never returns is withdrawn: its event parks first and its result is
// ignored, see runtime.Engine.ParkNow); and a retry or discard of a key of
// the transactional outbox (a transport that is an inspect.OutboxOperator:
// runtime/outbox's Relay). Discard and park now ask first, on the key's
// page. Mutations are POST only
// and refused cross-origin (http.CrossOriginProtection), so another site
// cannot make an operator's browser replay or discard; every mutation and
// every refusal is logged with who and what. Pages are html/template, which
// escapes keys, reasons and payloads wherever they appear, under a
// Content-Security-Policy that allows no script at all. Everything the pages
// use is embedded in the binary: the console works offline.
//
// # Pages
//
// The overview (the prefix itself) shows every entity and subscriber, each
// with small charts of its last hour; subscriber shows one with large
// charts; parked lists a subscriber's parked keys a page at a time; key
// shows one key's pending events and the age of the oldest, the event its
// handler runs (its name, version and payload, the attempt, when it began,
// how long it has run, and whether its context ended), its park, its stored
// version and state, and its parked events a page at a time. The
// pages reload themselves (Config.Refresh; ?refresh=0 stops it for a page)
// and need no JavaScript: the charts are SVG drawn on the server.
//
// # The last hour
//
// Every Config.Sample (5 seconds by default) the console samples each
// subscriber: its handled events, its failed attempts (those retried, and
// the events dead-lettered), its backlog (pending events), the age of its
// oldest pending event and its parked events. A subscriber seen through a
// store (ordergen-parked serve) has only its parked events. The samples of
// a subscriber live in a ring in memory that holds the last hour and no
// more: 48 bytes a sample, 720 samples at the default interval, so 34,560
// bytes per subscriber (at most 3,600 samples, 172,800 bytes, with a
// Sample of a second or less, which then covers less than an hour). The
// charts draw the handled and failed counts as rates per second. A
// service that wants to choose the moments itself sets a negative Sample
// and calls Console.Sample. Close stops the sampling.
//
// # JSON API
//
// Every response is JSON; an error is {"error": "..."} with a status that says
// what kind (400 bad input, 403 refused, 404 unknown entity, subscriber or
// key, 409 a key not parked, already replaying, not running or with nothing
// pending, 500 a store failed).
// Durations are in seconds, times in RFC 3339.
//
//	GET  api/overview                               entities, subscribers (stats, limits,
//	                                                backlog, stuck, first parked keys),
//	                                                transports, recent actions
//	GET  api/parked?entity=E&subscriber=S&offset=N&limit=N
//	                                                parked keys, oldest first, with total
//	GET  api/events?entity=E&subscriber=S&key=K&after=SEQ&limit=N
//	                                                parked events in order; "next" is the
//	                                                after of the next page, absent at the end
//	GET  api/key?entity=E&subscriber=S&key=K        the key's pending events, running
//	                                                attempt, park, version and state
//	GET  api/history?entity=E&subscriber=S          the subscriber's samples of the last
//	                                                hour, oldest first (handled and failed
//	                                                as counters)
//	GET  api/actions                                the latest mutations, newest first
//	POST api/replay   entity=E&subscriber=S&key=K   replay (form-encoded body)
//	POST api/discard  entity=E&subscriber=S&key=K   discard
//	POST api/cancel-attempt  entity=E&subscriber=S&key=K
//	                                                end the context of the key's running
//	                                                attempt (409 when none runs)
//	POST api/park-now entity=E&subscriber=S&key=K   park the key now with its pending
//	                                                events (409 when it has none)
//	POST api/outbox/retry    transport=N&entity=E&key=K
//	                                                let an outbox's parked or retrying key
//	                                                flow again (N: its transport's index in
//	                                                Config.Transports, "index" in the overview)
//	POST api/outbox/discard  transport=N&entity=E&key=K
//	                                                drop its unsent events
//
// A replay (or a park now waiting for a worker) waits for its end, up to
// Config.ActionTimeout, then answers 202 and it goes on. limit is at most 1000 (default 100).
package console
