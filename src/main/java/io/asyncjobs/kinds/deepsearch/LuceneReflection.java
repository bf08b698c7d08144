package io.asyncjobs.kinds.deepsearch;

import io.quarkus.runtime.annotations.RegisterForReflection;
import org.apache.lucene.analysis.tokenattributes.BytesTermAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.CharTermAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.FlagsAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.KeywordAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.OffsetAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.PackedTokenAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.PayloadAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.PositionLengthAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.SentenceAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.TermFrequencyAttributeImpl;
import org.apache.lucene.analysis.tokenattributes.TypeAttributeImpl;
import org.apache.lucene.codecs.lucene90.Lucene90DocValuesFormat;
import org.apache.lucene.codecs.lucene912.Lucene912Codec;
import org.apache.lucene.codecs.lucene912.Lucene912PostingsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99HnswScalarQuantizedVectorsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99HnswVectorsFormat;
import org.apache.lucene.codecs.lucene99.Lucene99ScalarQuantizedVectorsFormat;
import org.apache.lucene.search.BoostAttributeImpl;
import org.apache.lucene.search.MaxNonCompetitiveBoostAttributeImpl;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.SortedNumericSortField;
import org.apache.lucene.search.SortedSetSortField;

/**
 * What Lucene looks up reflectively while deepsearch indexes and searches, registered so that a
 * native executable can answer too; the JVM needs none of it. LuceneReflectionTest checks each list
 * against the Lucene jars, so an upgrade that adds a codec or an attribute fails the build.
 */
final class LuceneReflection {

  private LuceneReflection() {}

  /**
   * The codecs and formats Lucene loads by name through ServiceLoader, as listed in the service
   * files that {@code quarkus.native.resources.includes} puts into the executable. Quarkus turns
   * off GraalVM's automatic service registration, and one unregistered provider in a file fails the
   * whole look-up, so every provider of every jar is here (IDVersionPostingsFormat comes with
   * lucene-sandbox, which the query parser brings).
   */
  @RegisterForReflection(
      methods = false,
      fields = false,
      targets = {
        Lucene912Codec.class,
        Lucene912PostingsFormat.class,
        Lucene90DocValuesFormat.class,
        Lucene99HnswVectorsFormat.class,
        Lucene99HnswScalarQuantizedVectorsFormat.class,
        Lucene99ScalarQuantizedVectorsFormat.class,
        SortField.Provider.class,
        SortedNumericSortField.Provider.class,
        SortedSetSortField.Provider.class
      },
      classNames = "org.apache.lucene.sandbox.codecs.idversion.IDVersionPostingsFormat")
  static final class ServiceProviders {}

  /**
   * Token attribute implementations: Lucene's default AttributeFactory finds the class of an
   * attribute interface by name (the interface's name plus {@code Impl}) and makes it through a
   * MethodHandle on its public no-argument constructor.
   */
  @RegisterForReflection(
      methods = false,
      fields = false,
      targets = {
        BytesTermAttributeImpl.class,
        CharTermAttributeImpl.class,
        FlagsAttributeImpl.class,
        KeywordAttributeImpl.class,
        OffsetAttributeImpl.class,
        PackedTokenAttributeImpl.class,
        PayloadAttributeImpl.class,
        PositionIncrementAttributeImpl.class,
        PositionLengthAttributeImpl.class,
        SentenceAttributeImpl.class,
        TermFrequencyAttributeImpl.class,
        TypeAttributeImpl.class,
        BoostAttributeImpl.class,
        MaxNonCompetitiveBoostAttributeImpl.class
      })
  static final class AttributeImplementations {}

  /**
   * Query's class initializer looks up its own two {@code rewrite} methods (VirtualMethod, to spot
   * subclasses that still override the deprecated one); without them no query class loads.
   */
  @RegisterForReflection(fields = false, targets = Query.class)
  static final class QueryRewriteMethods {}
}
