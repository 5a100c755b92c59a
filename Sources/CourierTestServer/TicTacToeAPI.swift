import Foundation
import Hummingbird

/// The seeds' TicTacToe backend under `/tictactoe/v1/`: `games` lists objects of two kinds,
/// `tictactoe#game` and `tictactoe#score` (a finished game, with `outcome` and `date`), and
/// `currentBoard` always answers a score while the declared type is a game — the case where a
/// client needs kind resolution or raw JSON access (`JSONValueForKey:`).
enum TicTacToeAPI {
    static func add(to router: Router<BasicRequestContext>) {
        let group = router.group("/tictactoe/v1")
        group.get("games") { request, _ in
            NotesAPI.json(apiRequest: request, ["kind": "tictactoe#gameList", "items": [
                ["kind": "tictactoe#game", "id": "g1", "board": "X-O-X----", "state": "playing"],
                ["kind": "tictactoe#score", "id": "g2", "board": "XXXOO----", "outcome": "won", "date": "2011-10-12T10:00:00.000Z"],
                ["kind": "tictactoe#game", "id": "g3", "board": "---------", "state": "waiting"],
                ["kind": "tictactoe#score", "id": "g4", "board": "XOXXOOOXX", "outcome": "tied", "date": "2011-10-13T18:30:00.000Z"],
            ] as [[String: Any]]])
        }
        group.get("currentBoard") { request, _ in
            NotesAPI.json(apiRequest: request, ["kind": "tictactoe#score", "id": "g2", "board": "XXXOO----", "outcome": "won",
                                                "date": "2011-10-12T10:00:00.000Z"])
        }
        // HTTPRiot-style objects name their type in "type".
        group.get("notes-riot") { request, _ in
            NotesAPI.json(apiRequest: request, ["type": "Note", "id": "r1", "title": "From a Rails backend"])
        }
    }
}
