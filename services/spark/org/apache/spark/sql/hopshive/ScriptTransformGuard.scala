// In Spark's package: AnalysisException's error-class constructor is Spark's own.
package org.apache.spark.sql.hopshive

import org.apache.spark.sql.{AnalysisException, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, ScriptTransformation}

/**
 * Refuses `SELECT TRANSFORM(...) USING 'script'` (anywhere in a statement: subqueries and
 * views included) unless the engine was started with `spark.hopshive.scriptTransform.enabled=true`.
 *
 * A script runs as the engine's operating-system account, outside the session user's
 * identity: through a shared engine it could read that account's files and credentials.
 * The switch is read from the SparkContext's configuration, fixed when the engine starts,
 * so a session's `SET` cannot turn it on.
 */
case class ScriptTransformGuard(session: SparkSession) extends (LogicalPlan => Unit) {
  private lazy val enabled = session.sparkContext.getConf.getBoolean(ScriptTransformGuard.Enabled, false)

  override def apply(plan: LogicalPlan): Unit = if (!enabled) {
    plan.foreachWithSubqueries {
      case _: ScriptTransformation =>
        throw new AnalysisException(
          errorClass = "FEATURE_NOT_ENABLED",
          messageParameters = Map(
            "featureName" -> ("TRANSFORM (script operators run as the engine's service account, outside the " +
              "session user's identity)"),
            "configKey" -> ScriptTransformGuard.Enabled,
            "configValue" -> "true when the engine starts"))
      case _ =>
    }
  }
}

object ScriptTransformGuard {
  val Enabled = "spark.hopshive.scriptTransform.enabled"
}
