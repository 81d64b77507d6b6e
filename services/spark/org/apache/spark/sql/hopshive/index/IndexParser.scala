package org.apache.spark.sql.hopshive.index

import java.util.Locale

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.{ParserInterface, SqlStatementSplitResult}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{DataType, StructType}

/**
 * Spark's parser plus Hive's index statements (HIVE-417, as in Hive 2.3's grammar):
 * {{{
 * CREATE INDEX name ON TABLE t (col, ...) AS 'handler' [WITH DEFERRED REBUILD]
 *   [IDXPROPERTIES (...)] [IN TABLE name] [PARTITIONED BY (col, ...)]
 *   [ROW FORMAT ... | STORED AS format | STORED BY 'class'] [LOCATION 'path'] [TBLPROPERTIES (...)] [COMMENT 'text']
 * ALTER INDEX name ON t [PARTITION (k=v, ...)] REBUILD
 * DROP INDEX [IF EXISTS] name ON t
 * SHOW [FORMATTED] INDEX[ES] ON t [(FROM|IN) db]
 * }}}
 * Spark's own grammar has none of them, so a statement is ours exactly when it starts with one
 * of those keyword pairs; everything else goes to Spark's parser unchanged.
 */
class IndexParser(delegate: ParserInterface) extends ParserInterface {
  override def parsePlan(sqlText: String): LogicalPlan =
    if (IndexParser.Ours.findPrefixOf(sqlText).isDefined) new IndexStatementParser(sqlText).statement()
    else delegate.parsePlan(sqlText)

  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier = delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(sqlText)
  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
  override def splitStatements(sqlText: String): SqlStatementSplitResult = delegate.splitStatements(sqlText)
}

object IndexParser {
  private val Ours = """(?is)\s*(create\s+index|alter\s+index|drop\s+index|show\s+(formatted\s+)?index(es)?)\b""".r
}

/** One index statement: a hand-written recursive descent over a few token kinds. */
private class IndexStatementParser(sql: String) {
  private sealed trait Token
  private case class Word(text: String, quoted: Boolean) extends Token
  private case class Str(text: String) extends Token
  private case class Sym(text: String) extends Token

  private val tokens: IndexedSeq[Token] = tokenize()
  private var at = 0

  def statement(): LogicalPlan = {
    val plan = keyword() match {
      case "CREATE" => expect("INDEX"); create()
      case "ALTER" => expect("INDEX"); rebuild()
      case "DROP" => expect("INDEX"); drop()
      case _ =>
        val formatted = accept("FORMATTED")
        if (!accept("INDEXES")) expect("INDEX")
        show(formatted)
    }
    while (acceptSym(";")) {}
    if (at < tokens.length) fail(s"unexpected '${describe(tokens(at))}'")
    plan
  }

  private def create(): LogicalPlan = {
    val name = identifier()
    expect("ON"); expect("TABLE")
    val table = tableName()
    val columns = identifierList()
    expect("AS")
    val handler = peek match {
      case Some(Str(text)) => at += 1; text
      case _ => identifier()
    }
    val deferred = accept("WITH") && { expect("DEFERRED"); expect("REBUILD"); true }
    val idxProperties = if (accept("IDXPROPERTIES")) properties() else Map.empty[String, String]
    val inTable = if (accept("IN")) { expect("TABLE"); Some(tableName()) } else None
    val partitionedBy = if (accept("PARTITIONED")) { expect("BY"); Some(identifierList()) } else None
    var storage = IndexStorage()
    if (accept("ROW")) {
      expect("FORMAT")
      val start = at
      while (at < tokens.length && !peekKeyword(Set("STORED", "LOCATION", "TBLPROPERTIES", "COMMENT"))) at += 1
      storage = storage.copy(rowFormat = Some(tokens.slice(start, at).map(describe).mkString(" ")))
    }
    if (accept("STORED")) {
      if (accept("BY")) storage = storage.copy(storedBy = Some(string()))
      else { expect("AS"); storage = storage.copy(storedAs = Some(identifier())) }
    }
    if (accept("LOCATION")) storage = storage.copy(location = Some(string()))
    val tblProperties = if (accept("TBLPROPERTIES")) properties() else Map.empty[String, String]
    val comment = if (accept("COMMENT")) Some(string()) else None
    CreateIndexCommand(IndexDefinition(name, table, columns, handler, deferred, idxProperties, inTable, partitionedBy,
      storage, tblProperties, comment))
  }

  private def rebuild(): LogicalPlan = {
    val name = identifier()
    expect("ON")
    val table = tableName()
    val spec = if (accept("PARTITION")) Some(partitionSpec()) else None
    expect("REBUILD")
    RebuildIndexCommand(name, table, spec)
  }

  private def drop(): LogicalPlan = {
    val ifExists = accept("IF") && { expect("EXISTS"); true }
    val name = identifier()
    expect("ON")
    DropIndexCommand(name, tableName(), ifExists)
  }

  private def show(formatted: Boolean): LogicalPlan = {
    expect("ON")
    val table = tableName()
    val qualified = if (accept("FROM") || accept("IN")) table.copy(database = Some(identifier())) else table
    ShowIndexesCommand(qualified, formatted)
  }

  // ------------------------------------------------------------------ pieces
  private def tableName(): TableIdentifier = {
    val first = identifier()
    if (acceptSym(".")) TableIdentifier(identifier(), Some(first)) else TableIdentifier(first)
  }

  private def identifierList(): Seq[String] = {
    expectSym("(")
    val names = ArrayBuffer(identifier())
    while (acceptSym(",")) names += identifier()
    expectSym(")")
    names.toSeq
  }

  private def properties(): Map[String, String] = {
    expectSym("(")
    val pairs = ArrayBuffer.empty[(String, String)]
    if (!acceptSym(")")) {
      do {
        val key = peek match { case Some(Str(text)) => at += 1; text; case _ => identifier() }
        expectSym("=")
        pairs += key -> value()
      } while (acceptSym(","))
      expectSym(")")
    }
    pairs.toMap
  }

  private def partitionSpec(): Seq[(String, String)] = {
    expectSym("(")
    val pairs = ArrayBuffer.empty[(String, String)]
    do {
      val key = identifier()
      expectSym("=")
      pairs += key.toLowerCase(Locale.ROOT) -> value()
    } while (acceptSym(","))
    expectSym(")")
    pairs.toSeq
  }

  private def value(): String = next() match {
    case Str(text) => text
    case Word(text, _) => text
    case other => fail(s"expected a value, found '${describe(other)}'")
  }

  private def identifier(): String = next() match {
    case Word(text, _) => text
    case other => fail(s"expected a name, found '${describe(other)}'")
  }

  private def string(): String = next() match {
    case Str(text) => text
    case other => fail(s"expected a quoted string, found '${describe(other)}'")
  }

  private def keyword(): String = next() match {
    case Word(text, false) => text.toUpperCase(Locale.ROOT)
    case other => fail(s"expected a keyword, found '${describe(other)}'")
  }

  private def peek: Option[Token] = tokens.lift(at)

  private def peekKeyword(words: Set[String]): Boolean = peek match {
    case Some(Word(text, false)) => words(text.toUpperCase(Locale.ROOT))
    case _ => false
  }

  private def accept(word: String): Boolean = peekKeyword(Set(word)) && { at += 1; true }

  private def expect(word: String): Unit = if (!accept(word)) {
    fail(s"expected $word, found '${peek.map(describe).getOrElse("end of input")}'")
  }

  private def acceptSym(symbol: String): Boolean = peek.contains(Sym(symbol)) && { at += 1; true }

  private def expectSym(symbol: String): Unit = if (!acceptSym(symbol)) {
    fail(s"expected '$symbol', found '${peek.map(describe).getOrElse("end of input")}'")
  }

  private def next(): Token = {
    if (at >= tokens.length) fail("unexpected end of input")
    at += 1
    tokens(at - 1)
  }

  private def describe(token: Token): String = token match {
    case Word(text, _) => text
    case Str(text) => s"'$text'"
    case Sym(text) => text
  }

  private def fail(message: String): Nothing = throw IndexErrors.parse(s"$message in: $sql")

  private def tokenize(): IndexedSeq[Token] = {
    val out = ArrayBuffer.empty[Token]
    var i = 0
    while (i < sql.length) {
      val c = sql.charAt(i)
      if (c.isWhitespace) {
        i += 1
      } else if (c == '-' && sql.startsWith("--", i)) {
        while (i < sql.length && sql.charAt(i) != '\n') i += 1
      } else if (c == '\'' || c == '"' || c == '`') {
        val text = new StringBuilder
        i += 1
        while (i < sql.length && !(sql.charAt(i) == c && !sql.startsWith(s"$c$c", i))) {
          if (sql.charAt(i) == '\\' && c != '`' && i + 1 < sql.length) i += 1
          else if (sql.charAt(i) == c) i += 1    // a doubled quote
          text += sql.charAt(i)
          i += 1
        }
        if (i >= sql.length) fail("unterminated quote")
        i += 1
        out += (if (c == '`') Word(text.toString, quoted = true) else Str(text.toString))
      } else if ("(),=.;".indexOf(c) >= 0) {
        out += Sym(c.toString)
        i += 1
      } else {
        val start = i
        while (i < sql.length && !sql.charAt(i).isWhitespace && "(),=.;'\"`".indexOf(sql.charAt(i)) < 0) i += 1
        out += Word(sql.substring(start, i), quoted = false)
      }
    }
    out.toIndexedSeq
  }
}
