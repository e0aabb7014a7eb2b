package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// outboxes emits, for each entity, its transactional outbox: AccountOutbox
// over a genimpl.OutboxStore (runtime/sqlstore's Store), whose
// PublishDepositedTx methods write an event in the caller's transaction,
// numbered by the key's sequence in the outbox and stamped with it, for the
// relay of runtime/outbox to ship (genimpl.Outbox does the work).
// Generated code never imports the relay.
func outboxes(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		numbered := "Each event gets its key's next number from the outbox's own " +
			"sequence: entity " + e.Name + " has no version field, so the number only " +
			"orders the key's events for the relay."
		if e.Version != nil {
			numbered = "Each event gets its key's next version from the outbox's own " +
				"sequence, stamped into its " + e.Version.Name + " field before it is encoded."
		}
		Doc(f, 0, "%s writes %s events into the transactional outbox of a durable store, "+
			"in the caller's own transaction: the change and the events that announce it "+
			"commit together or not at all. %s The relay of "+
			"github.com/ordergen/ordergen/runtime/outbox (its Config.Entity is %q) ships "+
			"them in per-key order. Its PublishTx (any %s event), Entity and Seed are those "+
			"of the genimpl.Outbox it embeds, which says more.", n.Outbox, e.Name, numbered, e.Name, e.Name)
		f.Type().Id(n.Outbox).Struct(jen.Op("*").Id(n.OutboxCore))
		Doc(f, 0, "%s is the generic outbox that %s embeds.", n.OutboxCore, n.Outbox)
		f.Type().Id(n.OutboxCore).Op("=").Add(gi("Outbox")).Types(n.key(), jen.Id(n.Event), n.bodyType())
		Doc(f, 0, "%s returns the outbox of %s events in store (a runtime/sqlstore Store, "+
			"whose database the transactions given to its methods belong to); a nil store is "+
			"refused with runtime.ErrInvalidConfig.", n.NewOutbox, e.Name)
		f.Func().Id(n.NewOutbox).Params(jen.Id("store").Add(gi("OutboxStore"))).Params(jen.Op("*").Id(n.Outbox), jen.Error()).Block(
			jen.List(jen.Id("o"), jen.Err()).Op(":=").Add(gi("NewOutbox")).Call(jen.Id(n.Entity), jen.Id("store")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Op("&").Id(n.Outbox).Values(jen.Id("o")), jen.Nil()),
		)
		number := "number"
		if e.Version != nil {
			number = "version"
		}
		for _, ev := range e.Events {
			Doc(f, 0, "%s appends e to the outbox in tx and returns its %s (see PublishTx).", ev.PublishTx, number)
			f.Func().Params(jen.Id("o").Op("*").Id(n.Outbox)).Id(ev.PublishTx).Params(ctxParam(), jen.Id("tx").Add(sqlTx()), jen.Id("e").Id(ev.Name)).Params(jen.Uint64(), jen.Error()).Block(
				jen.Return(jen.Id("o").Dot("PublishTx").Call(jen.Id("ctx"), jen.Id("tx"), jen.Id("e"))),
			)
		}
	}
}
