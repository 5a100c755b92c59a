import ArgumentParser
import CourierCommands

// The root command is async, so every subcommand's async `run` is awaited (an async subcommand
// under a synchronous root never runs: swift-argument-parser #433). `@main` picks the async
// `main()`; a top-level `await CourierCommand.main()` would resolve to the synchronous one.
@main
extension CourierCommand {}
