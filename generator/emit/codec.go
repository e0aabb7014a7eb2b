package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/ordergen/ordergen/generator/ir"
)

// codecs emits one JSON codec per entity: the event's schema name is its
// type name, its struct is the JSON object (genimpl.Encode and Decode over
// the entity's description). Durable park stores and transports use it
// through durable.Codec.
func codecs(f *jen.File, pkg *ir.Package) {
	for _, e := range pkg.Entities {
		n := namesOf(pkg.Name, e)
		Doc(f, 0, "%s encodes %s events as JSON objects, with the event's name from the "+
			"schema as its type name. It implements durable.Codec for the park stores and "+
			"transports that carry events out of the process. Decoding ignores fields it "+
			"does not know, so an event from a schema with added fields still decodes.", n.Codec, e.Name)
		f.Type().Id(n.Codec).Struct()
		Doc(f, 0, "Encode returns the event's name and its JSON encoding. A nil e is refused "+
			"with runtime.ErrInvalidEvent.")
		f.Func().Params(jen.Id(n.Codec)).Id("Encode").Params(jen.Id("e").Id(n.Event)).Params(jen.String(), jen.Index().Byte(), jen.Error()).Block(
			jen.Return(gi("Encode").Call(jen.Id(n.Entity), jen.Id("e"))),
		)
		Doc(f, 0, "Decode rebuilds the %s event named name from its JSON encoding. An unknown "+
			"name gives an error wrapping durable.ErrUnknownEventType, bytes that do not "+
			"decode one wrapping runtime.ErrInvalidEvent.", e.Name)
		f.Func().Params(jen.Id(n.Codec)).Id("Decode").Params(jen.Id("name").String(), jen.Id("data").Index().Byte()).Params(jen.Id(n.Event), jen.Error()).Block(
			jen.Return(gi("Decode").Call(jen.Id(n.Entity), jen.Id("name"), jen.Id("data"))),
		)
	}
}
