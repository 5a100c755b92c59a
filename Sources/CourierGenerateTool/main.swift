import CourierGenerator

// The generator alone, for the SwiftPM plugins: `courier generate` without the rest of the
// `courier` command (load engine, test server) or Courier's runtime, so a package using the
// plugins builds only this.
await GeneratorTool.main(name: "CourierGenerateTool", arguments: Array(CommandLine.arguments.dropFirst()))
