// Reads YAML documents as Helm and kubectl do, with sigs.k8s.io/yaml, and prints what they read.
//
// Input on stdin: a JSON array of YAML documents (strings). Output on stdout: a JSON array with, for
// each document, {"json": <the document as JSON>} or {"error": "<why Go cannot read it>"}.
package main

import (
	"encoding/json"
	"os"

	"sigs.k8s.io/yaml"
)

type result struct {
	JSON  json.RawMessage `json:"json,omitempty"`
	Error string          `json:"error,omitempty"`
}

func main() {
	var documents []string
	if err := json.NewDecoder(os.Stdin).Decode(&documents); err != nil {
		panic(err)
	}
	results := make([]result, len(documents))
	for i, document := range documents {
		converted, err := yaml.YAMLToJSON([]byte(document))
		if err != nil {
			results[i].Error = err.Error()
		} else {
			results[i].JSON = converted
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		panic(err)
	}
}
