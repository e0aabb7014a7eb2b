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
			"has one, and records the event only when that handler returns nil. Its "+
			"Events, EventsOf and Reset are delivery.Recording's. It is safe for "+
			"concurrent use.", n.Recorder, emit.Article(k.pkg.Name), k.pkg.Name, n.Handler)
		f.Type().Id(n.Recorder).Struct(
			jen.Qual(DeliveryPath, "Recording").Types(k.keyType(e), k.gen(n.Event)),
			jen.Id("next").Add(k.gen(n.Handler)),
		)
		f.Line()
		f.Var().Id("_").Add(k.gen(n.Handler)).Op("=").Parens(jen.Op("*").Id(n.Recorder)).Parens(jen.Nil())
		f.Line()
		emit.Doc(f, 0, "%s returns a recorder that passes each event to next first; a nil "+
			"next only records.", n.NewRecorder)
		f.Func().Id(n.NewRecorder).Params(jen.Id("next").Add(k.gen(n.Handler))).Op("*").Id(n.Recorder).Block(
			jen.Return(jen.Op("&").Id(n.Recorder).Add(emit.Keyed(emit.Field{Name: "next", Value: jen.Id("next")}))),
		)
		// pass is a handler method's body: the next handler's call (a call
		// of r.next's method with args), then the events recorded. The
		// call's literal is written on one line, as jen would not.
		pass := func(method, args string, recorded jen.Code) jen.Code {
			return jen.Return(jen.Id("r").Dot("Pass").Call(
				jen.Id("r").Dot("next").Op("!=").Nil(),
				jen.Id("func() error { return r.next."+method+"("+args+") }"),
				recorded,
			))
		}
		if e.Batch {
			f.Line()
			emit.Doc(f, 0, "%s implements %s.%s.", n.HandleBatch, k.pkg.Name, n.Handler)
			f.Func().Params(jen.Id("r").Op("*").Id(n.Recorder)).Id(n.HandleBatch).Params(ctx.Clone(), jen.Id("key").Add(k.keyType(e)), jen.Id("events").Add(events.Clone())).Error().Block(
				pass(n.HandleBatch, "ctx, key, events", jen.Id("events").Op("...")),
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
				pass(method, "ctx, e", jen.Id("e")),
			)
		}
		k.resyncPassed(f, n)
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
	emit.Doc(f, 0, "%s is %s %s.%s that records the key of every notification it "+
		"handled, in handling order: one per call, however many notifications of the "+
		"key the call stands for. It passes each call to its next handler first, when "+
		"it has one, and records the key only when that handler returns nil. Its Keys, "+
		"CallsOf and Reset are delivery.Calls'. It is safe for concurrent use.",
		n.Recorder, emit.Article(k.pkg.Name), k.pkg.Name, n.Handler)
	f.Type().Id(n.Recorder).Struct(
		jen.Qual(DeliveryPath, "Calls").Types(key),
		jen.Id("next").Add(k.gen(n.Handler)),
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
		jen.Return(jen.Id("r").Dot("Pass").Call(
			jen.Id("r").Dot("next").Op("!=").Nil(),
			jen.Id("func() error { return r.next."+n.HandleChanged+"(ctx, key) }"),
			jen.Id("key"),
		)),
	)
}
