"""The one place YAML comes in and goes out: Helm's multi-document stream as a list of Documents.

Documents read from the stream keep their exact text, so what no filter replaces is written back
byte for byte, ``# Source:`` comments and all; they are parsed only as far as a filter asks, and read
as Go's ``sigs.k8s.io/yaml`` (Helm's and kubectl's reader) reads them. Documents a filter generates
are dumped from data so that every reader reads them back as meant, and inherit their parent's
origin: Helm 3's ``# Source:`` comment and Helm 4's file annotation.

    stream.py      the stream cut into documents' texts, and what a text cannot hold (no YAML read)
    nesting.py     how deep a text nests, bounded before libyaml reads it
    libyaml.py     PyYAML, imported without what only its pure-Python reader needs
    scalars.py     plain scalars as Go reads them, and which strings need quotes
    construct.py   node trees and data, as Go reads them, within limits
    document.py    Document: a read text parsed as far as asked, or generated data
    write.py       data to YAML text
    keys.py        objects by kind, namespace and name

Each is imported from its own module, so a stream with nothing to expand never loads a YAML library.
"""
