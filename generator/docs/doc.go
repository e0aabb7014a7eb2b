// Package docs renders the Markdown catalogue of a schema (ordergen docs):
// for each entity its key, version, states and branch states, events with
// their kinds, target states and fields, its resolved policies, and, when
// it has states, a Mermaid stateDiagram-v2 of its transitions. The text
// comes from the templates of package templates; this package builds the
// data they render, in the schema's order, so that the output depends only
// on the schema.
package docs
