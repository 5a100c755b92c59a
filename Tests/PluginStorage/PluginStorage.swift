// The rest of this module is generated at build time by CourierGeneratorPlugin from
// storage.v1.json. SwiftPM sees a target only once it holds a source file.
