// In Spark's package: the session's Hive client (HiveClientImpl) is private[hive].
package org.apache.spark.sql.hive

import org.apache.hadoop.hive.metastore.IMetaStoreClient
import org.apache.hadoop.hive.ql.metadata.Hive

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.hive.client.HiveClientImpl

/**
 * The Hive 2.3 metastore client Spark already holds for a session (its HiveExternalCatalog's),
 * for the calls Spark's catalog has no API for: Hive's index calls and locks.  Going through
 * Spark's client keeps its connection settings and credentials (SASL with the session's
 * delegation token) and its lock that serialises use of the client.
 */
object HopsHiveMetastore {
  /** `f` with the session's metastore client; it must not keep the client past the call. */
  def withClient[A](session: SparkSession)(f: IMetaStoreClient => A): A = {
    session.sharedState.externalCatalog.unwrapped match {
      case catalog: HiveExternalCatalog => catalog.client match {
        case impl: HiveClientImpl => impl.withHiveState(f(Hive.get().getMSC))
        case other => throw new UnsupportedOperationException(s"indexes need Spark's built-in Hive client, not $other")
      }
      case other => throw new UnsupportedOperationException(
        s"indexes need the Hive catalog (spark.sql.catalogImplementation=hive), not ${other.getClass.getSimpleName}")
    }
  }
}
