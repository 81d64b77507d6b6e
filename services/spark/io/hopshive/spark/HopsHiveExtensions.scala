package io.hopshive.spark

import org.apache.spark.sql.{SparkSessionExtensions, SparkSessionExtensionsProvider}
import org.apache.spark.sql.hopshive.{MapJoinPruning, ScriptTransformGuard, TruncateKeepingDirectories}
import org.apache.spark.sql.hopshive.index.{IndexParser, IndexScanStrategy}

/** HopsHive's Spark SQL extensions (`spark.sql.extensions`): TRUNCATE TABLE keeps the
 *  directories Hive metadata points to (see [[TruncateKeepingDirectories]]), and map-join
 *  partition pruning, off unless `spark.hopshive.mapJoinPruning.enabled` (see [[MapJoinPruning]]),
 *  and TRANSFORM refused unless `spark.hopshive.scriptTransform.enabled` (see [[ScriptTransformGuard]]);
 *  Hive's index statements (see [[IndexParser]]) and queries reading through indexes, on unless
 *  `spark.hopshive.index.enabled` is false (see [[IndexScanStrategy]]). */
class HopsHiveExtensions extends SparkSessionExtensionsProvider {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectPostHocResolutionRule(_ => TruncateKeepingDirectories)
    extensions.injectPreCBORule(session => MapJoinPruning(session))
    extensions.injectCheckRule(session => ScriptTransformGuard(session))
    extensions.injectParser((_, delegate) => new IndexParser(delegate))
    extensions.injectPlannerStrategy(session => IndexScanStrategy(session))
  }
}
