//! Load and validate a tool-identity catalog: bindings, collisions, lookup and the catalog measurement.
