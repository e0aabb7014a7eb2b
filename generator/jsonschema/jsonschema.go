package jsonschema

import _ "embed"

// URL is where the JSON Schema is published: the file in this package on
// the main branch. It is also the schema's $id.
const URL = "https://raw.githubusercontent.com/ordergen/ordergen/main/generator/jsonschema/ordergen.schema.json"

// Comment is the first line that makes the YAML language server check a
// schema file against the JSON Schema.
const Comment = "# yaml-language-server: $schema=" + URL

//go:embed ordergen.schema.json
var text string

// Schema returns the JSON Schema of ordergen schema files.
func Schema() []byte { return []byte(text) }
