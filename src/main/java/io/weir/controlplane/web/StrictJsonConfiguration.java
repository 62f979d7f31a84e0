package io.weir.controlplane.web;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.convert.converter.Converter;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.KeyDeserializer;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.deser.jdk.NumberDeserializers;
import tools.jackson.databind.deser.jdk.StringDeserializer;
import tools.jackson.databind.deser.std.StdScalarDeserializer;
import tools.jackson.databind.exc.InvalidFormatException;
import tools.jackson.databind.module.SimpleModule;
import tools.jackson.databind.type.LogicalType;

/**
 * Request bodies must carry each value in its own JSON type, once, and as valid text. Jackson by
 * default is lenient in ways that, in an API that grants access, widen it: {@code "tenantId": ""}
 * would become null (a cluster-wide token), {@code {"role":"viewer","role":"admin"}} would take
 * the last value, {@code 1700000000} would be read as an instant, {@code 1.9} as the integer 1,
 * {@code "100"} as 100, {@code 123} as the string "123". Each of these answers 400 naming the
 * field instead. The one conversion kept is an integer where a decimal is expected ({@code 1}
 * for {@code 1.0}), which is the same JSON number.
 *
 * <ul>
 *   <li>Duplicate object keys are refused ({@link StreamReadFeature#STRICT_DUPLICATE_DETECTION}).
 *   <li>No scalar is coerced from another JSON type, and an empty or blank string is not null (or
 *       anything else) for any type but text.
 *   <li>Enums (and roles, through their {@code @JsonCreator}) match their wire names exactly.
 *   <li>A UUID is a string in its canonical 8-4-4-4-12 hex form only, see {@link StrictUuids}
 *       (Jackson would also take base64 and surrounding blanks).
 *   <li>An instant is an RFC 3339 string with an offset, from year 1 to 9999 (what PostgreSQL's
 *       {@code timestamptz} holds with room to spare), never a number.
 *   <li>Text (values and object keys) may not contain NUL or a lone surrogate, see
 *       {@link StrictText}.
 *   <li>A decimal is finite: a number past what a double holds ({@code 1e309}) would be read as
 *       Infinity, which {@code @Positive} lets through and no limit can be computed from.
 * </ul>
 *
 * <p>This configures the application's one {@code JsonMapper}, which reads request bodies and,
 * through {@link JsonMergePatch}, merged PATCH documents; so PUT, POST and PATCH reject the same
 * inputs. {@code spring.jackson.deserialization.accept-float-as-int: false} in application.yml
 * says the same for floats in integer fields. Query parameters of type {@link Instant} go through
 * {@link #instantParameters() the same instant rules}.
 */
@Configuration(proxyBeanMethods = false)
class StrictJsonConfiguration {

    /** Earliest instant accepted: 0001-01-01T00:00:00Z. */
    static final Instant MIN_INSTANT = Instant.parse("0001-01-01T00:00:00Z");

    /** Latest instant accepted: 9999-12-31T23:59:59.999999999Z. */
    static final Instant MAX_INSTANT = Instant.parse("9999-12-31T23:59:59.999999999Z");

    /** How the errors describe a valid instant. */
    static final String INSTANT_DESCRIPTION = "an RFC 3339 date-time string (such as 2030-01-01T00:00:00Z) "
            + "from year 1 to 9999";

    @Bean
    JsonMapperBuilderCustomizer strictScalarTypes() {
        SimpleModule strictText = new SimpleModule("weir-strict-text")
                .addDeserializer(String.class, new StrictStringDeserializer())
                .addKeyDeserializer(String.class, new StrictKeyDeserializer())
                .addDeserializer(Instant.class, new StringFormDeserializer<>(Instant.class, LogicalType.DateTime,
                        StrictJsonConfiguration::parseInstant, INSTANT_DESCRIPTION))
                .addDeserializer(java.util.UUID.class, new StringFormDeserializer<>(java.util.UUID.class,
                        LogicalType.OtherScalar, StrictUuids::parse, StrictUuids.DESCRIPTION))
                .addDeserializer(Double.class, new FiniteDoubleDeserializer(Double.class, null))
                .addDeserializer(Double.TYPE, new FiniteDoubleDeserializer(Double.TYPE, 0.0));
        return builder -> builder
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .addModule(strictText)
                // Numbers, booleans and date-times from other JSON types (except int -> float).
                .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
                // "" or "  " is no value of any non-text type: not a null UUID, enum, number or object.
                .withCoercionConfigDefaults(c -> c
                        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail)
                        .setAcceptBlankAsEmpty(Boolean.TRUE))
                .withCoercionConfig(LogicalType.Textual, c -> c
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
                .withCoercionConfig(LogicalType.Integer, c -> c
                        .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail))
                .withCoercionConfig(LogicalType.Float, c -> c
                        .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail))
                .withCoercionConfig(LogicalType.Boolean, c -> c
                        .setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail))
                .withCoercionConfig(LogicalType.Enum, c -> c
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail))
                .withCoercionConfig(LogicalType.OtherScalar, c -> c
                        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail))
                .withCoercionConfig(LogicalType.DateTime, c -> c
                        .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                        .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail));
    }

    /** {@code ?from=...} and other instant query parameters: the rules of an instant in a body. */
    @Bean
    Converter<String, Instant> instantParameters() {
        return new Converter<>() {
            @Override
            public Instant convert(String source) {
                Instant parsed = parseInstant(source);
                if (parsed == null) {
                    throw new IllegalArgumentException("expected " + INSTANT_DESCRIPTION);
                }
                return parsed;
            }
        };
    }

    /** The instant {@code text} names under the rules above, or null if it names none. */
    static Instant parseInstant(String text) {
        if (text == null || StrictText.problem(text) != null) {
            return null;
        }
        Instant instant;
        try {
            instant = OffsetDateTime.parse(text, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
        } catch (DateTimeException | ArithmeticException e) { // DateTimeParseException included
            return null;
        }
        return instant.isBefore(MIN_INSTANT) || instant.isAfter(MAX_INSTANT) ? null : instant;
    }

    /** Text without NUL or lone surrogates, see {@link StrictText}. */
    static final class StrictStringDeserializer extends StdScalarDeserializer<String> {

        StrictStringDeserializer() {
            super(String.class);
        }

        @Override
        public LogicalType logicalType() {
            return LogicalType.Textual;
        }

        @Override
        public boolean isCachable() {
            return true;
        }

        @Override
        public String deserialize(JsonParser p, DeserializationContext ctxt) {
            String value = StringDeserializer.instance.deserialize(p, ctxt);
            String problem = value == null ? null : StrictText.problem(value);
            if (problem != null) {
                throw InvalidFormatException.from(p, problem, value, String.class);
            }
            return value;
        }
    }

    /** A double as Jackson reads it, refused when not finite. */
    static final class FiniteDoubleDeserializer extends NumberDeserializers.DoubleDeserializer {

        FiniteDoubleDeserializer(Class<Double> type, Double nullValue) {
            super(type, nullValue);
        }

        @Override
        public Double deserialize(JsonParser p, DeserializationContext ctxt) {
            Double value = super.deserialize(p, ctxt);
            if (value != null && !Double.isFinite(value)) {
                throw InvalidFormatException.from(p, "a number from -1.7976931348623157e308 to 1.7976931348623157e308",
                        p.getString(), Double.class);
            }
            return value;
        }
    }

    /** Object keys (such as label keys) under the same rule as text values. */
    static final class StrictKeyDeserializer extends KeyDeserializer {

        @Override
        public Object deserializeKey(String key, DeserializationContext ctxt) {
            String problem = StrictText.problem(key);
            if (problem != null) {
                throw InvalidFormatException.from(ctxt.getParser(), "key " + problem, key, String.class);
            }
            return key;
        }
    }

    /**
     * A value that JSON carries as a string of one exact form, such as an instant (RFC 3339
     * within {@link #MIN_INSTANT} .. {@link #MAX_INSTANT}) or a UUID (canonical form): any other
     * JSON type, and any other text, is refused naming the field and the form expected.
     */
    static final class StringFormDeserializer<T> extends StdScalarDeserializer<T> {

        private final LogicalType logicalType;
        private final java.util.function.Function<String, T> parse;
        private final String description;

        /**
         * @param parse the value {@code text} names, or null if it is not of the form
         * @param description the form, for the error ("an RFC 3339 date-time string ...")
         */
        StringFormDeserializer(Class<T> type, LogicalType logicalType, java.util.function.Function<String, T> parse,
                String description) {
            super(type);
            this.logicalType = logicalType;
            this.parse = parse;
            this.description = description;
        }

        @Override
        public LogicalType logicalType() {
            return logicalType;
        }

        @Override
        @SuppressWarnings("unchecked")
        public T deserialize(JsonParser p, DeserializationContext ctxt) {
            if (p.currentToken() != JsonToken.VALUE_STRING) {
                return (T) ctxt.handleUnexpectedToken(handledType(), p);
            }
            String text = p.getString();
            T value = parse.apply(text);
            if (value == null) {
                throw InvalidFormatException.from(p, "expected " + description, text, handledType());
            }
            return value;
        }
    }
}
