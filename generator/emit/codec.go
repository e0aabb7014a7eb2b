package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// codecs emits one JSON codec per entity: the event's schema name is its
// type name, its struct is the JSON object. Durable park stores and
// transports use it through durable.Codec.
func codecs(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		Doc(f, 0, "%s encodes %s events as JSON objects, with the event's name from the "+
			"schema as its type name. It implements durable.Codec for the park stores and "+
			"transports that carry events out of the process. Decoding ignores fields it "+
			"does not know, so an event from a schema with added fields still decodes.", n.Codec, e.Name)
		f.Type().Id(n.Codec).Struct()
		f.Var().Id("_").Add(du("Codec")).Types(jen.Id(n.Event)).Op("=").Id(n.Codec).Values()

		Doc(f, 0, "Encode returns the event's name and its JSON encoding. A nil e is refused "+
			"with runtime.ErrInvalidEvent.")
		f.Func().Params(jen.Id(n.Codec)).Id("Encode").Params(jen.Id("e").Id(n.Event)).Params(jen.String(), jen.Index().Byte(), jen.Error()).Block(
			jen.If(jen.Id("e").Op("==").Nil()).Block(
				jen.Return(jen.Lit(""), jen.Nil(), errorf("%w: nil "+e.Name+" event", rt("ErrInvalidEvent"))),
			),
			jen.List(jen.Id("data"), jen.Err()).Op(":=").Qual("encoding/json", "Marshal").Call(jen.Id("e")),
			jen.If(jen.Err().Op("!=").Nil()).Block(
				jen.Return(jen.Lit(""), jen.Nil(), errorf(pkg.Name+": encode "+e.Name+" event %s: %w", jen.Id("e").Dot("EventName").Call(), jen.Err())),
			),
			jen.Return(jen.Id("e").Dot("EventName").Call(), jen.Id("data"), jen.Nil()),
		)

		Doc(f, 0, "Decode rebuilds the %s event named name from its JSON encoding. An unknown "+
			"name gives an error wrapping durable.ErrUnknownEventType, bytes that do not "+
			"decode one wrapping runtime.ErrInvalidEvent.", e.Name)
		f.Func().Params(jen.Id(n.Codec)).Id("Decode").Params(jen.Id("name").String(), jen.Id("data").Index().Byte()).Params(jen.Id(n.Event), jen.Error()).Block(
			jen.Switch(jen.Id("name")).BlockFunc(func(g *jen.Group) {
				for _, ev := range e.Events {
					g.Case(jen.Lit(ev.Name)).Block(
						jen.Var().Id("e").Id(ev.Name),
						jen.If(jen.Err().Op(":=").Qual("encoding/json", "Unmarshal").Call(jen.Id("data"), jen.Op("&").Id("e")), jen.Err().Op("!=").Nil()).Block(
							jen.Return(jen.Nil(), errorf("%w: decode "+e.Name+" event "+ev.Name+": %v", rt("ErrInvalidEvent"), jen.Err())),
						),
						jen.Return(jen.Id("e"), jen.Nil()),
					)
				}
			}),
			jen.Return(jen.Nil(), errorf("%w: entity "+e.Name+" has no event %q", du("ErrUnknownEventType"), jen.Id("name"))),
		)
	}
}
