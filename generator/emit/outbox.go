package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// outboxes emits, for each entity, its transactional outbox: AccountOutbox
// over a durable.OutboxStore (runtime/sqlstore's Store), whose
// PublishDepositedTx methods write an event in the caller's transaction,
// numbered by the key's sequence in the outbox and stamped with it, for the
// relay of runtime/outbox to ship. Generated code never imports the relay.
func outboxes(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		outboxType(f, n)
		for _, ev := range e.Events {
			publishTx(f, n, ev)
		}
		publishAnyTx(f, n)
		seed(f, n)
	}
}

// outboxStore is the store type of an outbox.
func outboxStore() *jen.Statement { return du("OutboxStore").Types(sqlTx()) }

func outboxType(f *jen.File, n names) {
	e := n.e
	var numbered string
	if e.Version != nil {
		numbered = "Each event gets its key's next version from the outbox's own sequence " +
			"(1, 2, 3... per key, never one twice, however many writers), stamped into its " +
			e.Version.Name + " field before it is encoded."
	} else {
		numbered = "Each event gets its key's next number from the outbox's own sequence " +
			"(1, 2, 3... per key, never one twice, however many writers): entity " + e.Name +
			" has no version field, so the number only orders the key's events for the relay."
	}
	Doc(f, 0, "%s writes %s events into the transactional outbox of a durable store, in "+
		"the caller's own transaction: the change and the events that announce it commit "+
		"together or not at all, so neither a crash after the commit loses an event nor a "+
		"rollback publishes one. %s The relay of "+
		"github.com/ordergen/ordergen/runtime/outbox (its Config.Entity is %q) ships them "+
		"to a sink (a broker's producer, a dispatcher) in per-key order.\n\n"+
		"Concurrent transactions appending to one key take turns at its sequence row: on "+
		"PostgreSQL the second waits for the first to end (READ COMMITTED) or fails with a "+
		"serialization error to retry (REPEATABLE READ, SERIALIZABLE), and transactions "+
		"appending to the same keys in opposite orders can deadlock, as with any rows: "+
		"append in a consistent order.", n.Outbox, e.Name, numbered, e.Name)
	f.Type().Id(n.Outbox).Struct(
		jen.Id("store").Add(outboxStore()),
	)

	Doc(f, 0, "%s returns the outbox of %s events in store (a runtime/sqlstore Store, "+
		"whose database the transactions given to its methods belong to); a nil store is "+
		"refused with runtime.ErrInvalidConfig.", n.NewOutbox, e.Name)
	f.Func().Id(n.NewOutbox).Params(jen.Id("store").Add(outboxStore())).Params(jen.Op("*").Id(n.Outbox), jen.Error()).Block(
		jen.If(jen.Id("store").Op("==").Nil()).Block(jen.Return(jen.Nil(), errorf("%w: "+n.Outbox+" needs a store", rt("ErrInvalidConfig")))),
		jen.Return(jen.Op("&").Id(n.Outbox).Add(Keyed(Field{"store", jen.Id("store")})), jen.Nil()),
	)

	Doc(f, 0, "Entity returns the name the outbox writes %s events under, %q: the "+
		"Config.Entity of their relay.", e.Name, e.Name)
	f.Func().Params(jen.Id("o").Op("*").Id(n.Outbox)).Id("Entity").Params().String().Block(jen.Return(jen.Lit(e.Name)))
}

func publishTx(f *jen.File, n names, ev *ir.Event) {
	e := n.e
	stamped := "takes the next number of e's key"
	if e.Version != nil {
		stamped = "takes the next version of e's key, sets e." + e.Version.Name + " to it"
	}
	refused := ""
	if e.Key.Type.Name == "string" {
		refused = " It refuses an event with an empty key, with an error wrapping runtime.ErrInvalidEvent."
	}
	if e.Version != nil && e.Version.Type.Name != "uint64" {
		refused += " A version that does not fit the " + e.Version.Type.Name + " of e." + e.Version.Name +
			" is refused the same way."
	}
	what := map[bool]string{true: "version", false: "number"}[e.Version != nil]
	Doc(f, 0, "%s appends e to the outbox in tx: it %s, encodes e with %s and inserts it, "+
		"all in tx, and returns the %s. The relay sends it once tx commits; if tx "+
		"rolls back, neither the event nor its %s is left.%s After an error, roll tx back.",
		ev.PublishTx, stamped, n.Codec, what, what, refused)
	ctx := jen.Id("ctx").Qual("context", "Context")
	f.Func().Params(jen.Id("o").Op("*").Id(n.Outbox)).Id(ev.PublishTx).Params(ctx, jen.Id("tx").Add(sqlTx()), jen.Id("e").Id(ev.Name)).Params(jen.Uint64(), jen.Error()).BlockFunc(func(g *jen.Group) {
		prefix := "%w: " + e.Name + " event " + ev.Name + ": "
		if e.Key.Type.Name == "string" {
			g.If(jen.Id("e").Dot(e.Key.Name).Op("==").Lit("")).Block(jen.Return(
				jen.Lit(0), errorf(prefix+"key field "+e.Key.Name+" is empty", rt("ErrInvalidEvent")),
			))
		}
		encode := jen.Func().Params(jen.Id("v").Uint64()).Params(du("RawEvent"), jen.Error()).BlockFunc(func(g *jen.Group) {
			if v := e.Version; v != nil {
				field := func() *jen.Statement { return jen.Id("e").Dot(v.Name) }
				if v.Type.Name == "uint64" {
					g.Add(field()).Op("=").Id("v")
				} else {
					g.Add(field()).Op("=").Id(v.Type.Name).Call(jen.Id("v"))
					fits := jen.Uint64().Call(field()).Op("!=").Id("v")
					if !unsigned(v.Type) {
						fits = field().Op("<").Lit(1).Op("||").Add(fits)
					}
					g.If(fits).Block(jen.Return(du("RawEvent").Values(),
						errorf(prefix+"version %d does not fit version field "+v.Name+" ("+v.Type.Name+")", rt("ErrInvalidEvent"), jen.Id("v"))))
				}
			}
			g.List(jen.Id("name"), jen.Id("data"), jen.Err()).Op(":=").Id(n.Codec).Values().Dot("Encode").Call(jen.Id("e"))
			g.Return(du("RawEvent").Add(Keyed(Field{"Name", jen.Id("name")}, Field{"Data", jen.Id("data")})), jen.Err())
		})
		g.Return(jen.Id("o").Dot("store").Dot("AppendOutbox").Call(jen.Id("ctx"), jen.Id("tx"), jen.Lit(e.Name),
			keyTextOf(n, func() *jen.Statement { return jen.Id("e").Dot(e.Key.Name) }), encode))
	})
}

func publishAnyTx(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "PublishTx appends any %s event to the outbox in tx, through the Publish...Tx "+
		"method of its type, and returns its %s. A nil e is refused with "+
		"runtime.ErrInvalidEvent.", e.Name, map[bool]string{true: "version", false: "number"}[e.Version != nil])
	ctx := jen.Id("ctx").Qual("context", "Context")
	f.Func().Params(jen.Id("o").Op("*").Id(n.Outbox)).Id("PublishTx").Params(ctx, jen.Id("tx").Add(sqlTx()), jen.Id("e").Id(n.Event)).Params(jen.Uint64(), jen.Error()).Block(
		jen.Switch(jen.Id("e").Op(":=").Id("e").Assert(jen.Type())).BlockFunc(func(g *jen.Group) {
			for _, ev := range e.Events {
				g.Case(jen.Id(ev.Name)).Block(jen.Return(jen.Id("o").Dot(ev.PublishTx).Call(jen.Id("ctx"), jen.Id("tx"), jen.Id("e"))))
				g.Case(jen.Op("*").Id(ev.Name)).Block(jen.If(jen.Id("e").Op("!=").Nil()).Block(
					jen.Return(jen.Id("o").Dot(ev.PublishTx).Call(jen.Id("ctx"), jen.Id("tx"), jen.Op("*").Id("e"))),
				))
			}
		}),
		jen.Return(jen.Lit(0), errorf("%w: nil "+e.Name+" event", rt("ErrInvalidEvent"))),
	)
}

func seed(f *jen.File, n names) {
	e := n.e
	Doc(f, 0, "Seed sets, in tx (nil: a transaction of its own), the %s that key's first "+
		"outbox event follows: its first event gets version+1. It is for a service that adopts the outbox with %s keys it "+
		"numbered before: seed each with the last version its consumers saw, before its "+
		"first outbox event. Seeding a key again at the same version is harmless; a key "+
		"whose sequence is elsewhere (it has outbox events, or another seed) is refused "+
		"(sqlstore.ErrOutboxSeeded).", map[bool]string{true: "version", false: "number"}[e.Version != nil], e.Name)
	ctx := jen.Id("ctx").Qual("context", "Context")
	f.Func().Params(jen.Id("o").Op("*").Id(n.Outbox)).Id("Seed").Params(ctx, jen.Id("tx").Add(sqlTx()), jen.Id("key").Add(n.key()), jen.Id("version").Uint64()).Error().Block(
		jen.Return(jen.Id("o").Dot("store").Dot("SeedOutbox").Call(jen.Id("ctx"), jen.Id("tx"), jen.Lit(e.Name), keyText(n), jen.Id("version"))),
	)
}
