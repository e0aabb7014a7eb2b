package testkit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/emit"
)

func (k kit) recorders(f *jen.File) {
	for _, e := range k.pkg.Entities {
		n := namesOf(e)
		if e.Notification {
			k.notificationRecorder(f, n)
			continue
		}
		ctx := jen.Id("ctx").Qual("context", "Context")
		events := jen.Index().Add(k.gen(n.Event))

		emit.Doc(f, 0, "%s is %s %s.%s that records every event it handled, in "+
			"handling order. It passes each event to its next handler first, when it "+
			"has one, and records the event only when that handler returns nil. It is "+
			"safe for concurrent use.", n.Recorder, emit.Article(k.pkg.Name), k.pkg.Name, n.Handler)
		f.Type().Id(n.Recorder).Struct(
			jen.Id("next").Add(k.gen(n.Handler)),
			jen.Id("mu").Qual("sync", "Mutex"),
			jen.Id("events").Add(events.Clone()),
		)
		f.Line()
		f.Var().Id("_").Add(k.gen(n.Handler)).Op("=").Parens(jen.Op("*").Id(n.Recorder)).Parens(jen.Nil())
		f.Line()
		emit.Doc(f, 0, "%s returns a recorder that passes each event to next first; a nil "+
			"next only records.", n.NewRecorder)
		f.Func().Id(n.NewRecorder).Params(jen.Id("next").Add(k.gen(n.Handler))).Op("*").Id(n.Recorder).Block(
			jen.Return(jen.Op("&").Id(n.Recorder).Add(emit.Keyed(emit.Field{Name: "next", Value: jen.Id("next")}))),
		)
		if e.Batch {
			f.Line()
			emit.Doc(f, 0, "%s implements %s.%s.", n.HandleBatch, k.pkg.Name, n.Handler)
			f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id(n.HandleBatch).Params(ctx.Clone(), jen.Id("key").Add(k.keyType(e)), jen.Id("events").Add(events.Clone())).Error().Block(
				jen.If(jen.Id("r").Dot("next").Op("!=").Nil()).Block(
					jen.If(jen.Err().Op(":=").Id("r").Dot("next").Dot(n.HandleBatch).Call(jen.Id("ctx"), jen.Id("key"), jen.Id("events")), jen.Err().Op("!=").Nil()).Block(
						jen.Return(jen.Err()),
					),
				),
				jen.Id("r").Dot("record").Call(jen.Id("events").Op("...")),
				jen.Return(jen.Nil()),
			)
		}
		for _, ev := range e.Events {
			if e.Batch {
				break
			}
			method := ev.Handle
			f.Line()
			emit.Doc(f, 0, "%s implements %s.%s.", method, k.pkg.Name, n.Handler)
			f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id(method).Params(ctx.Clone(), jen.Id("e").Add(k.gen(ev.Name))).Error().Block(
				jen.If(jen.Id("r").Dot("next").Op("!=").Nil()).Block(
					jen.If(jen.Err().Op(":=").Id("r").Dot("next").Dot(method).Call(jen.Id("ctx"), jen.Id("e")), jen.Err().Op("!=").Nil()).Block(
						jen.Return(jen.Err()),
					),
				),
				jen.Id("r").Dot("record").Call(jen.Id("e")),
				jen.Return(jen.Nil()),
			)
		}
		k.resyncPassed(f, n)
		f.Line()
		f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("record").Params(jen.Id("e").Op("...").Add(k.gen(n.Event))).Block(
			jen.Id("r").Dot("mu").Dot("Lock").Call(),
			jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
			jen.Id("r").Dot("events").Op("=").Append(jen.Id("r").Dot("events"), jen.Id("e").Op("...")),
		)
		f.Line()
		emit.Doc(f, 0, "Events returns the events handled so far, in handling order.")
		f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("Events").Params().Add(events.Clone()).Block(
			jen.Id("r").Dot("mu").Dot("Lock").Call(),
			jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
			jen.Return(jen.Qual("slices", "Clone").Call(jen.Id("r").Dot("events"))),
		)
		f.Line()
		emit.Doc(f, 0, "EventsOf returns the events of the %s with key key handled so far, in "+
			"handling order.", e.Name)
		f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("EventsOf").Params(jen.Id("key").Add(k.keyType(e))).Add(events.Clone()).Block(
			jen.Id("r").Dot("mu").Dot("Lock").Call(),
			jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
			jen.Var().Id("out").Add(events.Clone()),
			jen.For(jen.List(jen.Id("_"), jen.Id("e")).Op(":=").Range().Id("r").Dot("events")).Block(
				jen.If(jen.Id("e").Dot("EventKey").Call().Op("==").Id("key")).Block(
					jen.Id("out").Op("=").Append(jen.Id("out"), jen.Id("e")),
				),
			),
			jen.Return(jen.Id("out")),
		)
		f.Line()
		emit.Doc(f, 0, "Reset forgets the events recorded so far.")
		f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("Reset").Params().Block(
			jen.Id("r").Dot("mu").Dot("Lock").Call(),
			jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
			jen.Id("r").Dot("events").Op("=").Nil(),
		)
	}
}

// resyncPassed emits the recorder's Resync method, for an entity with
// on_gap: resync: it passes the call to the next handler, and fails
// permanently without one.
func (k kit) resyncPassed(f *jen.File, n names) {
	e := n.e
	if !e.Resync {
		return
	}
	f.Line()
	emit.Doc(f, 0, "%s implements %s.%s: it returns what the next handler's does; "+
		"without one it returns runtime.ErrUnimplemented, and the key parks.", n.Resync, k.pkg.Name, n.Handler)
	f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id(n.Resync).Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("key").Add(k.keyType(e))).Params(k.gen(n.SourceState), jen.Error()).Block(
		jen.If(jen.Id("r").Dot("next").Op("==").Nil()).Block(
			jen.Return(k.gen(n.SourceState).Values(), jen.Qual(emit.RuntimePath, "ErrUnimplemented")),
		),
		jen.Return(jen.Id("r").Dot("next").Dot(n.Resync).Call(jen.Id("ctx"), jen.Id("key"))),
	)
}

// notificationRecorder emits the recorder of a notification entity: it
// records the keys it was told changed, since a notification's handler gets
// no event.
func (k kit) notificationRecorder(f *jen.File, n names) {
	e := n.e
	key := k.keyType(e)
	keys := jen.Index().Add(key)
	emit.Doc(f, 0, "%s is %s %s.%s that records the key of every notification it "+
		"handled, in handling order: one per call, however many notifications of the "+
		"key the call stands for. It passes each call to its next handler first, when "+
		"it has one, and records the key only when that handler returns nil. It is "+
		"safe for concurrent use.", n.Recorder, emit.Article(k.pkg.Name), k.pkg.Name, n.Handler)
	f.Type().Id(n.Recorder).Struct(
		jen.Id("next").Add(k.gen(n.Handler)),
		jen.Id("mu").Qual("sync", "Mutex"),
		jen.Id("keys").Add(keys.Clone()),
	)
	f.Line()
	f.Var().Id("_").Add(k.gen(n.Handler)).Op("=").Parens(jen.Op("*").Id(n.Recorder)).Parens(jen.Nil())
	f.Line()
	emit.Doc(f, 0, "%s returns a recorder that passes each call to next first; a nil "+
		"next only records.", n.NewRecorder)
	f.Func().Id(n.NewRecorder).Params(jen.Id("next").Add(k.gen(n.Handler))).Op("*").Id(n.Recorder).Block(
		jen.Return(jen.Op("&").Id(n.Recorder).Add(emit.Keyed(emit.Field{Name: "next", Value: jen.Id("next")}))),
	)
	f.Line()
	emit.Doc(f, 0, "%s implements %s.%s.", n.HandleChanged, k.pkg.Name, n.Handler)
	f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id(n.HandleChanged).Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("key").Add(key)).Error().Block(
		jen.If(jen.Id("r").Dot("next").Op("!=").Nil()).Block(
			jen.If(jen.Err().Op(":=").Id("r").Dot("next").Dot(n.HandleChanged).Call(jen.Id("ctx"), jen.Id("key")), jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Err()),
			),
		),
		jen.Id("r").Dot("mu").Dot("Lock").Call(),
		jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
		jen.Id("r").Dot("keys").Op("=").Append(jen.Id("r").Dot("keys"), jen.Id("key")),
		jen.Return(jen.Nil()),
	)
	f.Line()
	emit.Doc(f, 0, "Keys returns the keys of the calls handled so far, in handling order.")
	f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("Keys").Params().Add(keys.Clone()).Block(
		jen.Id("r").Dot("mu").Dot("Lock").Call(),
		jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
		jen.Return(jen.Qual("slices", "Clone").Call(jen.Id("r").Dot("keys"))),
	)
	f.Line()
	emit.Doc(f, 0, "CallsOf returns how many calls for key were handled so far.")
	f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("CallsOf").Params(jen.Id("key").Add(key)).Int().Block(
		jen.Id("r").Dot("mu").Dot("Lock").Call(),
		jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
		jen.Id("n").Op(":=").Lit(0),
		jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("r").Dot("keys")).Block(
			jen.If(jen.Id("k").Op("==").Id("key")).Block(jen.Id("n").Op("++")),
		),
		jen.Return(jen.Id("n")),
	)
	f.Line()
	emit.Doc(f, 0, "Reset forgets the calls recorded so far.")
	f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id("Reset").Params().Block(
		jen.Id("r").Dot("mu").Dot("Lock").Call(),
		jen.Defer().Id("r").Dot("mu").Dot("Unlock").Call(),
		jen.Id("r").Dot("keys").Op("=").Nil(),
	)
}
