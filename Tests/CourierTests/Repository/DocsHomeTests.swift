import CourierTestSupport
import Foundation
import Testing

/// One home per text: the guides live in Docs/ (and the README); the DocC catalog's articles
/// are short pointers to them. These checks fail when an article grows into a second copy,
/// points at a guide that is gone, or a guide has no article.
@Suite struct DocsHomeTests {
    static let catalog = Repository.path("Sources/Courier/Courier.docc")

    struct Article {
        var name: String
        var text: String
        /// The prose between `## Overview` and the pointer line.
        var overview: String
        /// The guide the article points at (`Docs/X.md` or `README.md`).
        var guides: [String]
    }

    static func articles() throws -> [Article] {
        let names = try FileManager.default.contentsOfDirectory(atPath: catalog.path)
            .filter { $0.hasSuffix(".md") && $0 != "Courier.md" }.sorted()
        return try names.map { name in
            let text = try String(contentsOf: catalog.appendingPathComponent(name), encoding: .utf8)
            let overview = text.components(separatedBy: "## Overview").dropFirst().joined()
                .components(separatedBy: "\n").filter { !$0.isEmpty && !$0.contains("in the repository.") }.joined(separator: " ")
            let guides = text.matches(of: /`((?:Docs\/[A-Za-z]+|README)\.md)`/).map { String($0.output.1) }
            return Article(name: name, text: text, overview: overview, guides: guides)
        }
    }

    @Test func everyArticleIsAShortPointerToOneGuideThatExists() throws {
        let articles = try Self.articles()
        #expect(articles.count >= 10)
        for article in articles {
            #expect(article.guides.count == 1, "\(article.name) must name exactly one guide: \(article.guides)")
            for guide in article.guides {
                #expect(FileManager.default.fileExists(atPath: Repository.path(guide).path), "\(article.name) points at \(guide), which is gone")
            }
            #expect(!article.text.contains("```"), "\(article.name) holds code: examples belong in its guide")
            #expect(article.overview.count <= 400,
                    "\(article.name) has \(article.overview.count) characters of overview: the guide is the one home, the article a summary")
        }
    }

    @Test func everyGuideHasAnArticleAndTheLandingPageListsThemAll() throws {
        let articles = try Self.articles()
        let pointedAt = Set(articles.flatMap(\.guides))
        let guides = try FileManager.default.contentsOfDirectory(atPath: Repository.path("Docs").path)
            .filter { $0.hasSuffix(".md") }.map { "Docs/\($0)" }
        #expect(guides.count >= 10)
        for guide in guides { #expect(pointedAt.contains(guide), "\(guide) has no article in Courier.docc") }
        #expect(pointedAt.contains("README.md"))
        #expect(articles.count == pointedAt.count, "two articles point at the same guide")

        let landing = try String(contentsOf: Self.catalog.appendingPathComponent("Courier.md"), encoding: .utf8)
        #expect(!landing.contains("```"), "Courier.md holds code: the README's quick start is its one home")
        for article in articles {
            let name = article.name.replacingOccurrences(of: ".md", with: "")
            #expect(landing.contains("<doc:\(name)>"), "Courier.md does not list \(name)")
        }
    }
}

/// Every file or folder of the repository that a guide names in backticks exists, so a file
/// that moves takes its guides with it.
@Suite struct DocsPathTests {
    @Test func everyPathTheGuidesNameExists() throws {
        var documents = try FileManager.default.contentsOfDirectory(atPath: Repository.path("Docs").path)
            .filter { $0.hasSuffix(".md") }.map { "Docs/\($0)" }
        documents += ["README.md", "CONTRIBUTING.md"]
        var checked = 0
        for document in documents {
            let text = try String(contentsOf: Repository.path(document), encoding: .utf8)
            for match in text.matches(of: /`((?:Tests|Sources|Scripts|Netem|Benchmarks|Snippets|Fuzz|deploy)\/[A-Za-z0-9_+.\/-]*[A-Za-z0-9_\/])`/) {
                let path = String(match.output.1)
                checked += 1
                #expect(FileManager.default.fileExists(atPath: Repository.path(path).path), "\(document) names `\(path)`, which does not exist")
            }
        }
        #expect(checked >= 20)
    }
}

/// Every relative link in the guides and the README reaches a file that exists and, with a
/// `#fragment`, a heading of it: a renamed heading takes its links with it.
@Suite struct DocsLinkTests {
    /// GitHub's anchor for a heading: lower-cased, punctuation other than `-` and `_` dropped,
    /// spaces made hyphens; a repeated heading gets `-1`, `-2`, ….
    static func anchors(of markdown: String) -> Set<String> {
        var anchors: Set<String> = [], inFence = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            guard !inFence, let heading = line.firstMatch(of: /^#{1,6} +(.*)$/)?.output.1 else { continue }
            let slug = String(heading.lowercased().unicodeScalars.filter {
                CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " "
            }.map(Character.init)).replacingOccurrences(of: " ", with: "-")
            var unique = slug, count = 0
            while anchors.contains(unique) { count += 1; unique = "\(slug)-\(count)" }
            anchors.insert(unique)
        }
        return anchors
    }

    @Test func everyRelativeLinkReachesAFileAndAHeading() throws {
        var documents = try FileManager.default.contentsOfDirectory(atPath: Repository.path("Docs").path)
            .filter { $0.hasSuffix(".md") }.map { "Docs/\($0)" }
        documents += ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]
        var checked = 0
        for document in documents {
            let text = try String(contentsOf: Repository.path(document), encoding: .utf8)
            let folder = (document as NSString).deletingLastPathComponent
            for match in text.matches(of: /\]\(([^)\s]+)\)/) {
                let target = String(match.output.1)
                guard !target.contains("://"), !target.hasPrefix("mailto:") else { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let file = parts[0].isEmpty ? document : (folder as NSString).appendingPathComponent(String(parts[0]))
                let path = (Repository.path(file).path as NSString).standardizingPath
                checked += 1
                guard FileManager.default.fileExists(atPath: path) else {
                    Issue.record("\(document) links \(target): no file \(file)")
                    continue
                }
                if parts.count == 2, file.hasSuffix(".md") {
                    let anchors = Self.anchors(of: try String(contentsOfFile: path, encoding: .utf8))
                    #expect(anchors.contains(String(parts[1])), "\(document) links \(target): \(file) has no such heading")
                }
            }
        }
        #expect(checked >= 50)
    }
}
